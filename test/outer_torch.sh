#!/bin/sh
# test/outer_torch.sh - the outer optimizer (lib/ct_outer.c) against
# PyTorch's own torch.optim.SGD(momentum=mu, nesterov=...): the same start
# model, the same round updates (the aggregate is theta - delta_r each
# round), four rounds; every weight within float32 rounding of PyTorch's
# (PyTorch may fuse a multiply-add where ct_outer rounds twice).
# Skipped (77) when python3 has no torch (Debian: python3-torch).
set -u
B=${top_builddir:-.}
RUN="$B/test/outer_run"
PY=
for p in python3 /usr/bin/python3; do
	"$p" -c 'import torch' 2>/dev/null && { PY=$p; break; }
done
[ -n "$PY" ] || { echo "skip: no python3 with torch"; exit 77; }
[ -x "$RUN" ] || { echo "skip: $RUN not built"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/ctune-outer-XXXXXX")
trap 'rm -rf "$T"' EXIT INT TERM
"$PY" - "$RUN" "$T" <<'PYEOF'
import array, subprocess, sys, torch
run, tmp = sys.argv[1], sys.argv[2]
n, rounds = 4099, 4
g = torch.Generator().manual_seed(31)
theta0 = torch.randn(n, generator=g, dtype=torch.float32)
deltas = [torch.randn(n, generator=g, dtype=torch.float32) * 1e-2 for _ in range(rounds)]
def f32(t):
    return array.array('f', t.tolist()).tobytes()
with open(tmp + '/in', 'wb') as f:
    f.write(f32(theta0))
    for d in deltas:
        f.write(f32(d))
bad = 0
for method, lr, mu in (('sgd', 0.7, 0.9), ('nesterov', 0.7, 0.9), ('nesterov', 0.5, 0.5),
                       ('sgd', 1.0, 0.0)):
    subprocess.run([run, method, str(lr), str(mu), str(n), str(rounds), tmp + '/in',
                    tmp + '/out'], check=True)
    got = array.array('f')
    with open(tmp + '/out', 'rb') as f:
        got.frombytes(f.read())
    p = torch.nn.Parameter(theta0.clone())
    opt = torch.optim.SGD([p], lr=lr, momentum=mu, nesterov=(method == 'nesterov'))
    worst = 0.0
    for r in range(rounds):
        agg = p.detach() - deltas[r]
        p.grad = p.detach() - agg
        opt.step()
        c = torch.tensor(got[r * n:(r + 1) * n], dtype=torch.float32)
        # float32 rounding of the step's terms: theta and lr * (d + mu * m)
        tol = 4e-7 * (p.detach().abs() + 1.0)
        err = (c - p.detach()).abs()
        worst = max(worst, float((err / tol).max()))
        if bool((err > tol).any()):
            i = int((err - tol).argmax())
            print('FAIL - %s lr %g mu %g round %d weight %d: %.9g, torch %.9g'
                  % (method, lr, mu, r + 1, i, float(c[i]), float(p.detach()[i])))
            bad += 1
            break
    else:
        print('ok - %s lr %g mu %g: %d rounds within float32 rounding of torch '
              '(worst %.2f of the tolerance)' % (method, lr, mu, rounds, worst))
sys.exit(1 if bad else 0)
PYEOF
