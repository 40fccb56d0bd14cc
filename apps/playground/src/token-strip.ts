// The Model tab's tokens: the prompt's, then each generated one as it streams in, as buttons in one line of text.
// Clicking one asks for its attention patterns; the picked token stays marked (aria-pressed).
import { el } from "./config-form.js";

export interface StripToken {
  readonly id: number;
  /** What the page shows: its text, or its id without a tokenizer. */
  readonly label: string;
  readonly source: "prompt" | "generated";
}

export interface TokenStrip {
  /** Starts over with these tokens (a new prompt). */
  reset(tokens: readonly StripToken[]): void;
  append(token: StripToken): void;
  /** Every token's id, in order. */
  ids(): number[];
  labels(): string[];
  /** Marks the token at `index` as picked (none: undefined). */
  select(index: number | undefined): void;
}

export function createTokenStrip(container: HTMLElement, onPick: (index: number) => void): TokenStrip {
  let tokens: StripToken[] = [];
  const button = (t: StripToken, index: number) => {
    const b = el(
      "button",
      {
        type: "button",
        class: `token ${t.source}`,
        "data-index": String(index),
        "data-token": String(t.id),
        "aria-pressed": "false",
        title: `token ${index}: id ${t.id} (${t.source}); click for its attention`,
      },
      [t.label],
    );
    b.addEventListener("click", () => onPick(index));
    return b;
  };
  return {
    reset(next) {
      tokens = [...next];
      container.replaceChildren(...tokens.map(button));
      container.dataset.count = String(tokens.length);
    },
    append(t) {
      container.append(button(t, tokens.length));
      tokens.push(t);
      container.dataset.count = String(tokens.length);
    },
    ids: () => tokens.map((t) => t.id),
    labels: () => tokens.map((t) => t.label),
    select(index) {
      for (const b of container.querySelectorAll<HTMLElement>("button.token"))
        b.setAttribute("aria-pressed", String(Number(b.dataset.index) === index));
    },
  };
}
