// What generate() reads off the decoder's graph (the ids input, the logits output, the vocabulary size) and the
// prompt as rows of ids, each checked before any kernel runs: a float tensor, an id outside [0, V), a prompt longer
// than the context are GenerateErrors naming the prompt or the graph.
import type { OpGraph } from "@attngraph/graph";
import { Tensor } from "@attngraph/tensor";
import { GenerateError } from "./generate-error.js";
import type { Tokenizer } from "./tokenizer.js";

/** A prompt: text (with a tokenizer), ids of one row, rows of ids [B][T], or an int32 Tensor [B, T] or [T]. */
export type Prompt = string | readonly number[] | readonly (readonly number[])[] | Tensor<"int32">;

/** What the graph gives generate(): ids go in at `input`, logits come out at `output`; ids are in [0, vocabSize). */
export interface GraphIO {
  readonly input: string;
  readonly output: string;
  /** Ids the graph takes: the embedding table's rows when the ids feed one, else the logits' V. */
  readonly vocabSize: number;
}

/** Checks that `graph` takes int32 ids [B, T] at `input` and gives logits [B, T, V] at `output`. */
export function graphIO(graph: OpGraph, input: string, output: string): GraphIO {
  const decl = graph.inputs.find((v) => v.name === input);
  if (decl === undefined)
    throw new GenerateError(
      `graph input ${input}`,
      "no such input (options.input names the token ids)",
      `one of ${graph.inputs.map((v) => v.name).join(", ")}`,
      "none",
    );
  if ((decl.dtype ?? "float32") !== "int32")
    throw new GenerateError(
      `graph input ${input}`,
      "token ids must be an int32 input",
      "int32 [B, T]",
      `${decl.dtype ?? "float32"} [${decl.shape.join(", ")}]`,
    );
  if (decl.shape.length !== 2)
    throw new GenerateError(`graph input ${input}`, "token ids must be [B, T]", "rank 2", `[${decl.shape.join(", ")}]`);
  if (!graph.outputs.includes(output))
    throw new GenerateError(
      `graph output ${output}`,
      "no such output (options.output names the logits)",
      `one of ${graph.outputs.join(", ")}`,
      "none",
    );
  const logits = graph.shapeOf(output);
  if (logits.length !== 3)
    throw new GenerateError(`graph output ${output}`, "logits must be [B, T, V]", "rank 3", `[${logits.join(", ")}]`);
  const table = graph.nodes.find((n) => n.kind === "embedding" && n.inputs["ids"] === input);
  const rows = table ? graph.shapeOf(table.inputs["weight"]!)[0] : undefined;
  const vocabSize = typeof rows === "number" ? rows : logits[2];
  if (typeof vocabSize !== "number")
    throw new GenerateError(
      `graph output ${output}`,
      "the vocabulary size is not fixed",
      "a number V in logits [B, T, V] or an embedding table [V, E]",
      String(vocabSize),
    );
  return { input, output, vocabSize };
}

/** The prompt as rows of ids: `batch` rows of one length in [1, blockSize], every id in [0, vocabSize). */
export function promptRows(
  prompt: Prompt,
  tokenizer: Tokenizer | undefined,
  io: GraphIO,
  batch: number,
  blockSize: number,
): number[][] {
  const rows = toRows(prompt, tokenizer);
  if (rows.length !== batch)
    throw new GenerateError(
      "prompt",
      "the batch differs from the decoder's",
      `${batch} row${batch === 1 ? "" : "s"} (compileDecoder's batch)`,
      `${rows.length}`,
    );
  const T = rows[0]!.length;
  rows.forEach((row, b) => {
    if (row.length !== T)
      throw new GenerateError(`prompt[${b}]`, "every row must have the same length", `${T} ids`, `${row.length}`);
  });
  if (T < 1) throw new GenerateError("prompt", "a prompt needs at least one token", "1 or more ids", "0");
  if (T > blockSize)
    throw new GenerateError(
      "prompt",
      "longer than the context (blockSize, at most the decoder's maxLength)",
      `<= ${blockSize} ids`,
      `${T}`,
    );
  rows.forEach((row, b) =>
    row.forEach((id, t) => {
      if (!Number.isSafeInteger(id) || id < 0 || id >= io.vocabSize)
        throw new GenerateError(
          `prompt[${b}][${t}]`,
          "not a token id of the graph",
          `an integer in [0, ${io.vocabSize})`,
          String(id),
        );
    }),
  );
  return rows;
}

function toRows(prompt: Prompt, tokenizer: Tokenizer | undefined): number[][] {
  if (typeof prompt === "string") {
    if (tokenizer === undefined)
      throw new GenerateError(
        "prompt",
        "a text prompt needs a tokenizer",
        "options.tokenizer (e.g. gpt2Tokenizer()), or token ids",
        "a string",
      );
    return [tokenizer.encode(prompt)];
  }
  if (Tensor.isTensor(prompt)) {
    if (prompt.dtype !== "int32")
      throw new GenerateError(
        "prompt",
        "token ids must be an int32 tensor",
        "Tensor.int32(ids, [B, T])",
        `a ${prompt.dtype} tensor [${prompt.shape.join(", ")}]`,
      );
    const ids = Array.from(prompt.toInt32Array());
    if (prompt.shape.length === 1) return [ids];
    if (prompt.shape.length !== 2)
      throw new GenerateError(
        "prompt",
        "token ids must be [B, T] or [T]",
        "rank 1 or 2",
        `[${prompt.shape.join(", ")}]`,
      );
    const [B, T] = prompt.shape as [number, number];
    return Array.from({ length: B }, (_, b) => ids.slice(b * T, (b + 1) * T));
  }
  if (!Array.isArray(prompt))
    throw new GenerateError(
      "prompt",
      "not a prompt",
      "text, ids, rows of ids or an int32 Tensor",
      prompt === null ? "null" : typeof prompt,
    );
  if (prompt.length > 0 && prompt.every((r) => Array.isArray(r)))
    return (prompt as readonly number[][]).map((r) => [...r]);
  if (prompt.some((r) => Array.isArray(r)))
    throw new GenerateError("prompt", "mixes ids and rows", "ids of one row, or rows of ids", "both");
  return [[...(prompt as readonly number[])]];
}
