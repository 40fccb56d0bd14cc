# Regenerates src/format.torch.json: what PyTorch's str(tensor) prints for each case (float32, default print options).
# Run: python3 scripts/torch-print.py > src/format.torch.json
# The committed file was made with Debian 12's python3-torch 1.13.1 (apt-get install python3-torch; it reports
# 1.13.0a0).
import json, math
import torch

def vals(n, f):
    return [f(i) for i in range(n)]

def enc(v):
    return "nan" if math.isnan(v) else ("inf" if v == math.inf else ("-inf" if v == -math.inf else v))

nan, inf = math.nan, math.inf
cases = [
    ("fixed 2x3", [2, 3], [0.43, 0.15, 0.89, 0.55, 0.87, 0.66]),
    ("integers", [3], [1.0, 2.0, 3.0]),
    ("negative fixed", [3], [-1.5, 2.25, -0.125]),
    ("negative integers", [2, 2], [0.0, -1.0, 10.0, -100.0]),
    ("3-D integers", [2, 3, 4], vals(24, float)),
    ("3-D fixed", [2, 2, 3], vals(12, lambda i: i * 0.37 % 1 - 0.5)),
    ("4-D", [2, 2, 2, 2], vals(16, lambda i: (i * 7 % 5) - 2.5)),
    ("-inf among integers", [3], [-inf, 1.0, 2.0]),
    ("-inf among fixed", [2, 2], [0.5, -inf, 0.25, 1.75]),
    ("nan among fixed", [2], [nan, 1.5]),
    ("inf and nan in sci", [2, 2], [1e-10, 1.0, nan, inf]),
    ("only specials", [3], [nan, inf, -inf]),
    ("zero and -inf", [2], [0.0, -inf]),
    ("tiny: sci", [2], [1e-5, 1.0]),
    ("tiny pair: sci", [2], [1e-5, 2e-5]),
    ("wide integers: sci", [2], [1.0, 10000.0]),
    ("huge: sci", [2], [1e9, 1.0]),
    ("1e8 stays integer", [2], [1e8, 1.0e6]),
    ("1.5e8 integer: sci", [1], [1.5e8]),
    ("min 1.2e-4 stays fixed", [2], [0.00012, 0.1]),
    ("zero and small", [2], [0.0, 0.001]),
    ("negative sci", [3], [-1e-5, 2.5e3, -123456.0]),
    ("float32 rounding", [3], [0.1, 0.2, 0.3]),
    ("half-even ties", [4], [0.03125, 0.09375, -0.03125, 1.03125]),
    ("negative zero", [2], [-0.0, 1.0]),
    ("negative zero fixed", [2], [-0.0, 0.5]),
    ("zeros", [2, 2], [0.0] * 4),
    ("scalar fixed", [], [0.43]),
    ("scalar integer", [], [3.0]),
    ("scalar nan", [], [nan]),
    ("scalar sci", [], [1e-7]),
    ("row wraps at 80 columns", [20], vals(20, float)),
    ("fixed row wraps", [30], vals(30, lambda i: i * 0.1)),
    ("matrix rows wrap", [2, 12], vals(24, lambda i: (i - 12) * 1.25)),
    ("summarised vector", [2000], vals(2000, float)),
    ("summarised matrix", [40, 40], vals(1600, lambda i: i * 0.37 % 1 - 0.5)),
    ("summarised 3-D", [11, 10, 10], vals(1100, lambda i: i * 0.013)),
    ("summarised format ignores hidden values", [1001], vals(1001, lambda i: 1e6 if i == 500 else 0.5 + i % 3)),
    ("summarised short last dim", [500, 3], vals(1500, lambda i: i % 7 - 3.0)),
    ("wide values wrap", [12], vals(12, lambda i: 123.456 * (i + 1) * (-1) ** i)),
    ("column vector", [5, 1], [0.5, -1.25, 3.0, 0.0, 2.0]),
    ("scalar negative", [], [-2.5]),
    ("scalar negative zero", [], [-0.0]),
    ("one wide row", [1, 1001], vals(1001, lambda i: i * 0.001)),
    ("long rows summarised", [101, 11], vals(1111, lambda i: (i % 17) * 0.25 - 2.0)),
    ("nan in a summarised tensor", [1200], vals(1200, lambda i: math.nan if i == 1 else i * 0.5)),
    ("float32 max and min", [2], [3.4028234663852886e38, 1.401298464324817e-45]),
    ("rounding carries into the exponent", [2], [9.99996e-5, 1.0]),
    ("rounding carries in fixed", [2], [9.99996, 0.5]),
]
out = []
for name, shape, values in cases:
    t = torch.tensor(values, dtype=torch.float32).reshape(shape)
    out.append({"name": name, "shape": shape, "values": [enc(v) for v in values], "torch": str(t)})
for name, shape in [("empty 1-D", [0]), ("empty 2-D", [0, 3]), ("empty 2x0", [2, 0])]:
    out.append({"name": name, "shape": shape, "values": [], "torch": str(torch.zeros(shape))})
# One case per line: readable diffs without one line per number.
lines = ",\n  ".join(json.dumps(c, separators=(",", ":")) for c in out)
print('{"torch":%s,"cases":[\n  %s\n]}' % (json.dumps(torch.__version__), lines))
