// Just enough of vitest's API (describe, it, beforeAll, afterAll, expect) to run the testkit's executor contract suite
// inside a browser page: the headless-Chromium test bundles the suite with `vitest` aliased to this file. `expect` is
// vitest's own (@vitest/expect on chai), so assertions behave exactly as in Node.
import {
  GLOBAL_EXPECT,
  JestAsymmetricMatchers,
  JestChaiExpect,
  JestExtend,
  chai,
  getState,
  setState,
  type ExpectStatic,
} from "@vitest/expect";

chai.use(JestExtend);
chai.use(JestChaiExpect);
chai.use(JestAsymmetricMatchers);

type Fn = () => unknown;
interface Suite {
  readonly name: string;
  readonly children: (Suite | Test)[];
  readonly beforeAll: Fn[];
  readonly afterAll: Fn[];
}
interface Test {
  readonly name: string;
  readonly fn: Fn;
}
export interface ShimResult {
  readonly name: string;
  readonly ok: boolean;
  readonly skipped?: boolean;
  readonly error?: string;
}

const root: Suite = { name: "", children: [], beforeAll: [], afterAll: [] };
let current = root;

export function describe(name: string, body: () => void): void {
  const suite: Suite = { name, children: [], beforeAll: [], afterAll: [] };
  current.children.push(suite);
  const parent = current;
  current = suite;
  try {
    body();
  } finally {
    current = parent;
  }
}

export function it(name: string, fn: Fn): void {
  current.children.push({ name, fn });
}
export const test = it;

export function beforeAll(fn: Fn): void {
  current.beforeAll.push(fn);
}

export function afterAll(fn: Fn): void {
  current.afterAll.push(fn);
}

export const expect = ((value: unknown, message?: string) => {
  const { assertionCalls } = getState(expect);
  setState({ assertionCalls: assertionCalls + 1 }, expect);
  return chai.expect(value, message);
}) as unknown as ExpectStatic;
Object.assign(expect, chai.expect);
setState(
  {
    assertionCalls: 0,
    isExpectingAssertions: false,
    isExpectingAssertionsError: null,
    expectedAssertionsNumber: null,
    expectedAssertionsNumberErrorGen: null,
  },
  expect,
);
(globalThis as Record<PropertyKey, unknown>)[GLOBAL_EXPECT] = expect;

/** Runs everything declared so far, in order; `skip(name)` says which tests cannot run here, and why. */
export async function runAll(skip: (name: string) => string | undefined = () => undefined): Promise<ShimResult[]> {
  const results: ShimResult[] = [];
  const walk = async (suite: Suite, prefix: string): Promise<void> => {
    const path = suite.name ? `${prefix}${suite.name} > ` : prefix;
    for (const f of suite.beforeAll) await f();
    for (const child of suite.children) {
      if ("fn" in child) {
        const name = `${path}${child.name}`;
        const why = skip(name);
        if (why) {
          results.push({ name, ok: true, skipped: true, error: why });
          continue;
        }
        try {
          await child.fn();
          results.push({ name, ok: true });
        } catch (e) {
          results.push({ name, ok: false, error: e instanceof Error ? `${e.message}` : String(e) });
        }
      } else await walk(child, path);
    }
    for (const f of suite.afterAll) await f();
  };
  await walk(root, "");
  return results;
}
