#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""tb-layout.py DIR [--ranks N] [--comm] - check that DIR holds traces that
TensorBoard's PyTorch profiler plugin (torch_tb_profiler, pytorch/kineto
tb_plugin, read at 041e7ce9, the last commit before its removal) loads the
way it loads a Kineto trace.  Each check names the rule and the plugin file
it comes from (torch_tb_profiler/...).  Written from reading that source; the
plugin itself is not needed.  Prints one line per failure, exits 1 on any.

--ranks N: exactly N worker files, distributedInfo.rank 0..N-1.
--comm: every worker has communication ops, the same number each (the
distributed view's condition).
"""
import json
import os
import re
import sys

# consts.py WORKER_PATTERN: the loader (profiler/loader.py RunLoader.load)
# only takes files named <worker>[.<span digits>].pt.trace.json[.gz].
WORKER = re.compile(r"^(.*?)(\.\d+)?\.pt\.trace\.json(?:\.gz)?$")
# consts.py NODE_PROCESS_PATTERN: run_generator.py DistributedRunGenerator
# splits a worker name into node and process; otherwise it warns.
NODE_PROCESS = re.compile(r"^(.*)_(\d+)")
# profiler/trace.py EventTypeMap: the categories the parser knows.
CATS = {'trace', 'cpu_op', 'operator', 'runtime', 'cuda_runtime', 'mtia_runtime', 'glow_runtime', 'xpu_runtime',
        'privateuse1_runtime', 'kernel', 'memcpy', 'gpu_memcpy', 'memset', 'gpu_memset', 'python', 'memory',
        'python_function', 'user_annotation', 'gpu_user_annotation'}
DEVICE_CATS = {'kernel', 'memcpy', 'gpu_memcpy', 'memset', 'gpu_memset'}
OP_CATS = {'cpu_op', 'operator', 'python', 'user_annotation', 'gpu_user_annotation', 'python_function'}
# profiler/trace.py NcclOpNameSet, GlooOpNameSet: the communication ops.
COMM = {'nccl:broadcast', 'nccl:reduce', 'nccl:all_reduce', 'nccl:all_gather', 'nccl:reduce_scatter',
        'gloo:broadcast', 'gloo:reduce', 'gloo:all_reduce', 'gloo:all_gather', 'gloo:reduce_scatter'}
MAX_GPU_PER_NODE = 64  # consts.py


def check_file(path, worker, bad):
    def fail(msg):
        bad.append(f"{os.path.basename(path)}: {msg}")

    with open(path, 'rb') as f:
        doc = json.loads(f.read())  # profiler/data.py _preprocess_file: json.loads
    if not isinstance(doc, dict) or not isinstance(doc.get('traceEvents'), list):
        fail("no traceEvents list (data.py: trace_json['traceEvents'])")
        return None
    # data.py RunProfileData.__init__ reads these top-level keys.
    if doc.get('schemaVersion') != 1:
        fail("schemaVersion is not 1 (data.py data_schema_version; Kineto writes 1)")
    props = doc.get('deviceProperties')
    if not isinstance(props, list) or not props:
        fail("deviceProperties is not a non-empty list (run_generator.py _get_gpu_info indexes it by GPU id)")
        props = []
    for i, p in enumerate(props):
        # run_generator.py _get_gpu_info: device_props[gpu_id].get(...): entry i is GPU i.
        if not isinstance(p, dict) or p.get('id') != i:
            fail(f"deviceProperties[{i}] is not the entry of GPU {i}")
    dist = doc.get('distributedInfo')
    if not isinstance(dist, dict) or not isinstance(dist.get('rank'), int):
        fail("distributedInfo.rank missing (data.py distributed_info; Kineto's rank of the worker)")
    elif not isinstance(dist.get('world_size'), int) or not 0 <= dist['rank'] < dist['world_size']:
        fail("distributedInfo.world_size missing or not above the rank")
    if doc.get('displayTimeUnit') not in ('ms', 'ns'):
        fail("displayTimeUnit not ms or ns (the trace viewer's unit)")
    if not NODE_PROCESS.match(worker):
        fail(f"worker name {worker!r} is not <node>_<number> (run_generator.py NODE_PROCESS_PATTERN)")

    kernels = comm = 0
    ext_ids = set()
    devices = set()
    for n, e in enumerate(doc['traceEvents']):
        where = f"event {n}"
        # data.py _preprocess_file: event_list[i]['name'] for every event.
        if not isinstance(e, dict) or not isinstance(e.get('name'), str):
            fail(f"{where}: no name (data.py reads every event's name)")
            continue
        if e.get('ph') != 'X':
            continue  # trace.py create_event: only X (and [memory] instants) become events
        cat = e.get('cat')
        # trace.py create_trace_event: category.lower() - a missing cat raises.
        if not isinstance(cat, str):
            fail(f"{where}: X event without a string cat (trace.py: category.lower())")
            continue
        if not isinstance(e.get('ts'), (int, float)) or not isinstance(e.get('dur'), (int, float)):
            fail(f"{where}: ts or dur not a number (event_parser.py ts + dur)")
            continue
        c = cat.lower()
        args = e.get('args', {})
        if c in DEVICE_CATS:
            dev = args.get('device')
            # gpu_metrics_parser.py parse_event: kernel_ranges_per_device[args.device],
            # 64 lists; a pid other than the device is warned about.
            if not isinstance(dev, int) or not 0 <= dev < MAX_GPU_PER_NODE:
                fail(f"{where}: {c} without args.device 0..63 (gpu_metrics_parser.py)")
            elif dev != e.get('pid'):
                fail(f"{where}: pid {e.get('pid')!r} is not args.device {dev} (gpu_metrics_parser.py warns)")
            elif dev >= len(props):
                fail(f"{where}: device {dev} has no deviceProperties entry (run_generator.py _get_gpu_info)")
            else:
                devices.add(dev)
            kernels += c == 'kernel'
        if c in OP_CATS:
            # event_parser.py _parse_node: tid2list[int(tid)].
            try:
                int(e.get('tid'))
            except (TypeError, ValueError):
                fail(f"{where}: op with a tid that is not an integer (event_parser.py int(tid))")
            # trace.py ProfilerStepEvent: int(name.split('#')[1]).
            if e['name'].startswith('ProfilerStep#') and not e['name'][13:].isdigit():
                fail(f"{where}: ProfilerStep# not followed by a number (trace.py ProfilerStepEvent)")
            if e['name'] in COMM:
                x = args.get('External id', args.get('external id'))
                # event_parser.py: communication_data[op_node.external_id] - one node per id.
                if x is None or x in ext_ids:
                    fail(f"{where}: {e['name']} without its own external id (event_parser.py communication_data)")
                ext_ids.add(x)
                comm += 1
        elif c not in CATS and c not in ('other', 'trace'):
            pass  # unknown categories are left out by the plugin, which is allowed
    return {'rank': dist.get('rank') if isinstance(dist, dict) else None, 'kernels': kernels, 'comm': comm,
            'devices': devices}


def main(argv):
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    d, ranks, need_comm = argv[0], None, False
    rest = argv[1:]
    while rest:
        a = rest.pop(0)
        if a == '--ranks':
            ranks = int(rest.pop(0))
        elif a == '--comm':
            need_comm = True
        else:
            print(f"tb-layout.py: unknown option {a}", file=sys.stderr)
            return 2
    bad = []
    found = {}
    for name in sorted(os.listdir(d)):
        m = WORKER.match(name)
        if m and os.path.isfile(os.path.join(d, name)):
            found[name] = check_file(os.path.join(d, name), m.group(1), bad)
    if not found:
        bad.append(f"{d}: no <worker>.pt.trace.json file (consts.py WORKER_PATTERN)")
    got = [r for r in found.values() if r]
    if ranks is not None:
        if len(found) != ranks:
            bad.append(f"{len(found)} worker files, expected {ranks}")
        if sorted(str(r['rank']) for r in got) != [str(i) for i in range(ranks)]:
            bad.append(f"distributedInfo ranks {sorted(str(r['rank']) for r in got)}, expected 0..{ranks - 1}")
    if need_comm:
        # loader.py _process_distributed_profiles: every worker has communication,
        # the same number of communication nodes each.
        counts = {r['comm'] for r in got}
        if not got or 0 in counts or len(counts) != 1:
            bad.append(f"communication ops per worker {sorted(r['comm'] for r in got)}: the distributed view "
                       "needs the same non-zero number in each (loader.py)")
    for b in bad:
        print(b)
    for name, r in found.items():
        if r:
            print(f"# {name}: rank {r['rank']}, {r['kernels']} kernels, {r['comm']} communication ops, "
                  f"devices {sorted(r['devices'])}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
