// The operand triples a three-input kernel's strided paths are tested on (the optimizer kernels' state, grad and param
// on the cpu and wasm): each operand strided in turn beside the others' dense ones, then all three.
/** x, y, z with each in turn, then all three, taken from `strided` (views of other layouts) instead of `dense`. */
export function eachStrided<T>([x, y, z]: readonly [T, T, T], [xT, yT, zT]: readonly [T, T, T]): [T, T, T][] {
  return [
    [xT, y, z],
    [x, yT, z],
    [x, y, zT],
    [xT, yT, zT],
  ];
}
