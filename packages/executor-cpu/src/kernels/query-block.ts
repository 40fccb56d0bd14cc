// The unit the fused attention's loops (forward and backward) visit: a block of query rows of one head. The per-block
// steps and the mask modification's block hooks take it as one object; each reads its fields once, at its start.

/** Query rows [i0, i0 + br) of head h of batch b. */
export interface QueryBlock {
  readonly b: number;
  readonly h: number;
  readonly i0: number;
  readonly br: number;
}
