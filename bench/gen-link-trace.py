#!/usr/bin/env python3
"""Write a Kineto trace that stresses op linking.

usage: bench/gen-link-trace.py {nested,siblings,flat} N OUT

  nested    N cpu ops on one thread, each strictly inside the one before
            (op k: ts = k us, dur = 4N - 2k us), named aten::add_.
  siblings  N aten::mm cpu ops on one thread, all with the same ts and dur
            (identical intervals, so none encloses another).
  flat      N aten::add_ ops one after another (op k: ts = 1000 + 4k us,
            dur 2 us): the same events with no nesting, a linear baseline.

Every op k has External id k+1 and launches one kernel inside it
(cudaLaunchKernel at ts(op k) + 0.5 us, correlation k+1), which runs on
stream 7 of device 0.  Each op thus owns exactly one kernel: a correct
`kprof analyze -g op` reports N calls and N kernels.  The output is written
to OUT.tmp and renamed.
"""

import os
import sys


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("nested", "siblings", "flat"):
        sys.exit(__doc__.split("\n\n")[1])
    shape, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        f.write('{"schemaVersion":1,"deviceProperties":[{"id":0,'
                '"name":"NVIDIA H100 80GB HBM3","totalGlobalMem":85021163520,'
                '"computeMajor":9,"computeMinor":0,"numSms":132}],'
                '"traceEvents":[\n')
        name = "aten::mm" if shape == "siblings" else "aten::add_"
        dims = ('"Input Dims":[[64,64],[64,64],[]],'
                '"Input type":["float","float","Scalar"]' if shape != "siblings" else
                '"Input Dims":[[64,64],[64,64]],"Input type":["float","float"]')
        lines = []
        for k in range(n):
            if shape == "nested":
                ts, dur = 1000 + k, 4 * n - 2 * k
            elif shape == "flat":
                ts, dur = 1000 + 4 * k, 2
            else:
                ts, dur = 1000, 4 * n
            e = k + 1
            lines.append(
                '{"ph":"X","cat":"cpu_op","name":"%s","pid":1,"tid":1,"ts":%d,"dur":%d,'
                '"args":{"External id":%d,%s}},\n'
                '{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,'
                '"ts":%d.500,"dur":0.1,"args":{"External id":%d,"correlation":%d}},\n'
                '{"ph":"X","cat":"kernel","name":"gen_kernel","pid":0,"tid":7,'
                '"ts":%d,"dur":0.5,"args":{"External id":%d,"correlation":%d,'
                '"device":0,"stream":7}}'
                % (name, ts, dur, e, dims, ts, e, e, 10 * n + k, e, e))
            if len(lines) >= 10000:
                f.write(",\n".join(lines))
                f.write(",\n" if k + 1 < n else "")
                lines = []
        if lines:
            f.write(",\n".join(lines))
        f.write('\n]}\n')
    os.replace(tmp, out)


if __name__ == "__main__":
    main()
