// Duplicate keys in a JSON text. JSON.parse keeps the last of two equal keys without a word, so a safetensors header
// naming a tensor twice would silently load the second entry and drop the first; a reader that must refuse an
// ambiguous header has to look at the text itself. The scan runs on text JSON.parse has accepted, so it only needs to
// follow strings (for their escapes) and nesting.

/** Where a duplicate key was found: the keys of the objects around it (outermost first), and the key. */
export interface DuplicateKey {
  readonly path: readonly string[];
  readonly key: string;
}

interface Frame {
  readonly object: boolean;
  /** The keys seen so far; undefined in an array, or in an object deeper than the scan looks. */
  readonly keys: Set<string> | undefined;
  readonly path: readonly string[];
  /** In an object: whether the next string is a key (after `{` or `,`) rather than a value (after `:`). */
  expectKey: boolean;
  lastKey: string;
}

/**
 * The first key that appears twice in one object of `json` (valid JSON), looking at the outermost object and the
 * objects up to `depth` levels inside it (1: the outermost object only); undefined when there is none.
 */
export function findDuplicateKey(json: string, depth: number): DuplicateKey | undefined {
  const stack: Frame[] = [];
  for (let i = 0; i < json.length; i++) {
    const c = json[i];
    if (c === '"') {
      let end = i + 1;
      while (json[end] !== '"') end += json[end] === "\\" ? 2 : 1; // a backslash always escapes the next character
      const top = stack[stack.length - 1];
      if (top?.object && top.expectKey) {
        const key = JSON.parse(json.slice(i, end + 1)) as string;
        if (top.keys?.has(key)) return { path: top.path, key };
        top.keys?.add(key);
        top.lastKey = key;
        top.expectKey = false;
      }
      i = end;
    } else if (c === "{" || c === "[") {
      const parent = stack[stack.length - 1];
      const path = parent ? [...parent.path, parent.object ? parent.lastKey : "[]"] : [];
      const object = c === "{";
      stack.push({
        object,
        keys: object && stack.length < depth ? new Set() : undefined,
        path,
        expectKey: object,
        lastKey: "",
      });
    } else if (c === "}" || c === "]") {
      stack.pop();
    } else if (c === ",") {
      const top = stack[stack.length - 1];
      if (top?.object) top.expectKey = true;
    }
  }
  return undefined;
}
