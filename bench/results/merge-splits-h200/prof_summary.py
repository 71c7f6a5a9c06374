"""Self time by function of a Node .cpuprofile (node --cpu-prof), largest first, and the
shares of wasm (the engine and wgpu), Dawn's bindings (the `__wbg_*` glue's callees are
native: their time shows as the glue's self time), GC, idle and the rest.
usage: prof_summary.py FILE [TOP] [LAST_SECONDS]: LAST_SECONDS counts only the profile's last
seconds (a decode loop after the load)."""
import collections, json, sys

p = json.load(open(sys.argv[1]))
nodes = {n['id']: n for n in p['nodes']}
# The samples' times (timeDeltas are the gaps between them).
times, at = [], 0
for d in p['timeDeltas']:
    at += d
    times.append(at)
since = times[-1] - float(sys.argv[3]) * 1e6 if len(sys.argv) > 3 else -1
t = collections.Counter()
for sid, d, when in zip(p['samples'], p['timeDeltas'], times):
    if when >= since:
        t[sid] += d
by_fn = collections.Counter()
for nid, us in t.items():
    cf = nodes[nid]['callFrame']
    by_fn[(cf['functionName'] or '(anon)', cf['url'].split('/')[-1])] += us
total = sum(by_fn.values())
kinds = collections.Counter()
for (name, url), us in by_fn.items():
    if name in ('(idle)', '(program)', '(garbage collector)'):
        kinds[name] += us
    elif '.wasm' in url or name in ('wasm-to-js', 'js-to-wasm'):
        kinds['wasm (engine, wgpu)'] += us
    elif name.startswith('__wbg_'):
        kinds['WebGPU calls (wasm-bindgen glue and Dawn)'] += us
    else:
        kinds['other JS'] += us
print(f'total {total / 1e3:.0f} ms')
for k, us in kinds.most_common():
    print(f'{us / 1e3:9.1f} ms {100 * us / total:5.1f}%  {k}')
print()
for (name, url), us in by_fn.most_common(int(sys.argv[2]) if len(sys.argv) > 2 else 45):
    print(f'{us / 1e3:9.1f} ms {100 * us / total:5.1f}%  {name[:90]}  {url}')
