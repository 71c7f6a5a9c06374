# A decode token's device time per kernel after 8 and after 512 tokens: natively
# (`kindling bench --profile --json` lines) beside Dawn's (bench/dawn.mjs TRACE_GPU=1 lines).
import json
import re
import sys

native = [json.loads(l) for l in open(sys.argv[1]) if l.startswith('{')]
dawn = [json.loads(l) for l in open(sys.argv[2]) if l.startswith('{')]


def op_of(name):
    m = re.search(r"op: (\w+)", name)
    ty = re.search(r"ty: (?:Some\((\w+)\)|None)", name)
    return f"{m.group(1)} {ty.group(1) or ''}".strip() if m else name


rows = {}
for r in native:
    p = r['prompt_tokens']
    for k in r['profile']['decode_per_token']:
        name = re.sub(r" ×\d+$", "", k['kernel'])
        rows.setdefault(name, {})[f'native p{p}'] = rows.get(name, {}).get(f'native p{p}', 0) + k['us']
for d in dawn:
    for key, g in d.items():
        if not key.endswith('_gpu_us'):
            continue
        p = key[1:-len('_gpu_us')]
        for k, v in g['decode_per_token']['kernels'].items():
            name = op_of(k)
            rows.setdefault(name, {})[f'dawn p{p}'] = rows.get(name, {}).get(f'dawn p{p}', 0) + v['us']
cols = ['native p8', 'native p512', 'dawn p8', 'dawn p512']
print('| kernel | ' + ' | '.join(cols) + ' |')
print('|---|' + '---:|' * len(cols))
tot = {c: 0.0 for c in cols}
for name, v in sorted(rows.items(), key=lambda kv: -kv[1].get('dawn p512', 0)):
    for c in cols:
        tot[c] += v.get(c, 0)
    print(f'| {name} | ' + ' | '.join(f"{v[c]:.0f}" if c in v else '' for c in cols) + ' |')
print('| total | ' + ' | '.join(f"{tot[c]:.0f}" for c in cols) + ' |')
