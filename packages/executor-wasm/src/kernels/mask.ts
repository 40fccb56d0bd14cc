// mask: −∞ where causal (with alignment), a sliding window, key padding or a user 0/1 mask hides the key (composed by
// "or"); visible scores become scale · score + bias. The CPU executor's rules and value checks (same errors, thrown
// before anything is written): padding and user mask values other than 0/1 are "input" errors naming the element (the
// shapes are the shape rule's). May run in place. With a signal, a big call runs in chunks of rows (chunks.ts).
import {
  findNonBinary,
  maskOffset,
  nonBinaryMaskError,
  userMaskStrides,
  windowOf,
  type MaskAttrs,
} from "@attngraph/graph";
import { chunkedKernel, overRows } from "../chunks.js";
import { attrsOf, checkKeyPadding, optionalInputs, requireInput, writeInPlaceChunked, type Call } from "./adapter.js";
import { hostElements } from "./host-read.js";
import type { WasmContext } from "../context.js";
import type { WasmValue } from "../value.js";

/** A user mask or bias as the module reads it: address (0 when absent) and strides over [B, H, L, S]. */
type UserInput = readonly [address: number, s0: number, s1: number, s2: number, s3: number];

const ABSENT: UserInput = [0, 0, 0, 0, 0];

/**
 * Inputs: scores [B, H, L, S], optional keyPaddingMask [B, S], optional mask and bias ([L, S], [B, L, S] or
 * [B, H, L, S], dims of 1 broadcast) → [B, H, L, S]; attrs { causal, window, alignment, scale }.
 */
export const maskKernel = chunkedKernel((call, ctx) => {
  const scores = requireInput(call, 0, "scores");
  const [pad, user, bias] = optionalInputs(call, 1, "keyPaddingMask", "mask", "bias");
  const attrs = attrsOf<MaskAttrs>(call);
  const [nb, nh, nl, ns] = scores.shape as [number, number, number, number];
  if (pad !== undefined) checkKeyPadding(call, ctx, pad);
  const u = user === undefined ? ABSENT : userMask(call, ctx, scores.shape, user);
  const bi =
    bias === undefined ? ABSENT : ([bias.address, ...userMaskStrides(call, "bias", scores.shape, bias)] as const);
  const [s0, s1, s2, s3] = scores.strides as [number, number, number, number];
  return writeInPlaceChunked(call, ctx, scores, (dst) => {
    if (dst.size === 0) return undefined;
    const off = maskOffset(attrs.alignment, nl, ns);
    const [ps0, ps1] = pad === undefined ? [0, 0] : (pad.strides as [number, number]);
    const ints = [
      scores.address,
      s0,
      s1,
      s2,
      s3,
      pad?.address ?? 0,
      ps0,
      ps1,
      ...u,
      ...bi,
      nb,
      nh,
      nl,
      ns,
      attrs.causal ? 1 : 0,
      off,
      windowOf(attrs),
      dst.address,
    ];
    // Written right before each call: the params area is shared, and a chunked call yields between its parts.
    const part = (r0: number, r1: number) =>
      ctx.exports.mask(writeMaskParams(ctx, ctx.params, attrs.scale, ints), r0, r1);
    return overRows(
      call,
      ctx,
      nb * nh * nl,
      ns * (user === undefined && bias === undefined ? MASK_WORK : MASK_USER_WORK),
      part,
    );
  });
});

/**
 * MaskParams' fields in the module's order (assembly/mask.ts): `scale` a float64 at 0, then the integers 4 bytes each
 * from byte 8 (MASK_INT_FIELDS), as a test holds to the compiler's layout.
 */
export const MASK_INT_FIELDS = [
  "src",
  "s0",
  "s1",
  "s2",
  "s3",
  "pad",
  "ps0",
  "ps1",
  "user",
  "u0",
  "u1",
  "u2",
  "u3",
  "bias",
  "b0",
  "b1",
  "b2",
  "b3",
  "nb",
  "nh",
  "nl",
  "ns",
  "causal",
  "off",
  "win",
  "dst",
] as const;
/** Byte offset of the first integer field (after `scale`). */
export const MASK_INTS_AT = 8;

/** Writes a MaskParams block at `address` (8-byte aligned): `scale`, then `ints` in MASK_INT_FIELDS' order. */
function writeMaskParams(ctx: WasmContext, address: number, scale: number, ints: readonly number[]): number {
  ctx.f64()[address / 8] = scale;
  const i32 = ctx.i32();
  const base = (address + MASK_INTS_AT) / 4;
  for (let i = 0; i < ints.length; i++) i32[base + i] = ints[i]! | 0;
  return address;
}

/**
 * A user 0/1 mask as the module reads it (its strides over the scores, userMaskStrides; its shape is the shape rule's),
 * every value checked to be 0 or 1 (findNonBinary).
 */
function userMask(call: Call, ctx: WasmContext, scores: readonly number[], m: WasmValue): UserInput {
  const strides = userMaskStrides(call, "mask", scores, m);
  const bad = findNonBinary(hostElements(ctx, m), m.shape);
  if (bad !== undefined) throw nonBinaryMaskError(call, "mask", bad);
  return [m.address, ...strides];
}

/** Work per element in multiply-adds of the SIMD matmul: a scalar strided copy with a compare (measured ≈ 20, Node 20). */
const MASK_WORK = 20;
/** With a user mask or a bias: two more strided loads and a float64 multiply-add (measured ≈ 37, Node 20). */
const MASK_USER_WORK = 40;
