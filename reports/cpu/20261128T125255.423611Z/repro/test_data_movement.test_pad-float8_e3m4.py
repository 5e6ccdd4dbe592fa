#!/usr/bin/env python3
r"""Standalone reproduction of a pjrt-conformance failure (pjrt-conformance 0.1.0).

    test:    conformance/test_data_movement.py::test_pad[float8_e3m4]
    status:  fail_wrong_result
    backend: cpu cpu (jaxlib 0.8.0)
    needs:   numpy, ml_dtypes, jax==0.8.0

Runs with no pytest and no import of the conformance suite, from any folder:
`python3 THIS_FILE [--plugin-library PATH]`, with pjrt_repro.py (the checks every
reproduction of the bundle shares) in the same folder. It embeds the drawn inputs, the
program (and for a partitioned program its mesh, PartitionSpecs and partition count:
it runs partitioned, over the same devices) and the expected value the test computed,
and prints expected vs observed (floats with their bits in hex).

A C API plugin's library is found in this order: --plugin-library PATH, the
environment variable PJRT_CONFORMANCE_PLUGIN_LIBRARY, the plugin's installed Python
package (as `needs:` names it); one line says which was used.

Exit status (one line says why, never a traceback):
  0  fixed: the backend gives the correct result;
  1  present: the defect is still there;
  2  cannot run: no plugin library found, a module missing, too few devices, or an
     error raised while setting up, compiling or running (not the recorded defect).
A crash of the backend kills it by a signal (the shell shows 128 + the signal).
"""
import json
import os
import sys

DATA = json.loads(r'''{
 "check": "execute",
 "nodeid": "conformance/test_data_movement.py::test_pad[float8_e3m4]",
 "via": "jax",
 "library": null,
 "client_options": {},
 "platform": "cpu",
 "devices": 8,
 "sharding": null,
 "program": "module @jit_data_movement_pad attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {\n  func.func public @main(%arg0: tensor<1023x1xf8E3M4>, %arg1: tensor<f8E3M4>) -> (tensor<1023x2xf8E3M4> {jax.result_info = \"result\"}) {\n    %0 = stablehlo.pad %arg0, %arg1, low = [0, 0], high = [0, 1], interior = [0, 0] : (tensor<1023x1xf8E3M4>, tensor<f8E3M4>) -> tensor<1023x2xf8E3M4>\n    return %0 : tensor<1023x2xf8E3M4>\n  }\n}\n",
 "inputs": [
  {
   "dtype": "float8_e3m4",
   "shape": [
    1023,
    1
   ],
   "base64": "pILC2c/rJoAhbdmC+L0QRbjozU6pCH0KXvBCE7YnO+s7IqtqeHoyqU4cz6ZDWarpK7KCgHF7TI5/moLdX0nAur/5Ka55ASuw7b9WjwfoYO/nN3TLkMdy0LCQxRNop7MAheTmZL/YftsfDOeNcxDmCHnTz8MHBMq6byee2CGD9ywOANsWOkv53C55qAVWM52KOBKVFD7ruUzx1iZ7z1Q1UAyjOmc99SAHaMpeATUHlB+o6x4CiArSq9vijoY6Nq6lMWbed/DgiZ1lGpkQM7E4Yhr1/nW3Jkn/PxETI1YaGKYt2PJh86p/rz7GR/PGw4SmvKUe14ALPrCvaTm0xFqQyLo7CuBSwpWfFR4zlLl1s3U7anHY9J59hhhOG2D1AmxPGA1HbE9zj3xDs7K4VXm145KmrBLSZB3vnCAGiEx3G1vRpTis9sc0ku3eLSyoCGZSo5ox0PkLJJhClCEGnlmBibyS7LmPJEE5JEkD8BoF6eOjupBgA3YnOrwC1LZVMYmf74ru75EHghW8LIxgt80o1U/unWZRDn/JYO07Ua9QRz0EH6zKQkVh4Gz8TBSSUFsOvenXOoa1C/u44dqSE7d4JvXaK9zTcBxzry4e5Uno28ts4pFFKF6GjYjMWsSaRFEBeP5LkWu1kGe8ByQCDaWTMhJyT/K0lzsX9zuIn8qpkJQiPyHm1Xu7TBRh7u032wes7grx47LgEzHkKB3CJlO68RTWcAxA3Hdd7GPyorG9ARt9hJOCWDsNoQPflMMzAFrttES/o6WOcHAw52V558Zg9DOsHDILLPl/oNaSDH2K2xWxDgAnDE/GnmjUgFmLpb7+Q9OPmgH5TBRoUS4EyYTFLx2avw+BhPpEh9xRaOOzV3/x+JT8cQCBhwr9MzpuQCnJNumZE8B+JmpVCTBIiB0HvKy90b9azg22aUmp7K28jO4QKEXBnTlsHYNc4iEWYqC6pRtn+JIqa1jXtuULJQLK9+MhC9/aysMDnE6GHlcYF92EdfoVIEhc+0PXztPwuQs3Xxg+XPdloSZgPlFpsjNo+GRGAl4L0dLjQs9CYlY8TtOJt8U6YU3genwzrFOqynxlUBZK5GYLSM3pgN4j+Xhs1lmdx50PbiEJ/kUqbfeY94mLXTcZ2T9YcfURFSacJlnu0cUoyvPoXrgX83bQDsJ6u+TA6i6rcUedmJ4o6NvzQgcbDWrtLckelyOK0U+iCBgEBf1dF68TCcK7Zzsm29dEg4qCEeabxtntkfX4RFLI6r63bLB+uYEy11NW6Z+umBI4Q5xxpuKyJFjtFuk5xQ4obj4IkN/q2E8fly4XJA9t7o9XnD3CMfNEQn/pzEWodd6WlZypQea4RuMuk/c3MF//"
  },
  {
   "dtype": "float8_e3m4",
   "shape": [],
   "base64": "/A=="
  }
 ],
 "expected": {
  "dtype": "float8_e3m4",
  "shape": [
   1023,
   2
  ],
  "base64": "pPyC/ML82fzP/Ov8JvyA/CH8bfzZ/IL8+Py9/BD8Rfy4/Oj8zfxO/Kn8CPx9/Ar8Xvzw/EL8E/y2/Cf8O/zr/Dv8Ivyr/Gr8ePx6/DL8qfxO/Bz8z/ym/EP8Wfyq/On8K/yy/IL8gPxx/Hv8TPyO/H/8mvyC/N38X/xJ/MD8uvy//Pn8Kfyu/Hn8Afwr/LD87fy//Fb8j/wH/Oj8YPzv/Of8N/x0/Mv8kPzH/HL80Pyw/JD8xfwT/Gj8p/yz/AD8hfzk/Ob8ZPy//Nj8fvzb/B/8DPzn/I38c/wQ/Ob8CPx5/NP8z/zD/Af8BPzK/Lr8b/wn/J782Pwh/IP89/ws/A78APzb/Bb8OvxL/Pn83Pwu/Hn8qPwF/Fb8M/yd/Ir8OPwS/JX8FPw+/Ov8ufxM/PH81vwm/Hv8z/xU/DX8UPwM/KP8Ovxn/D389fwg/Af8aPzK/F78Afw1/Af8lPwf/Kj86/we/AL8iPwK/NL8q/zb/OL8jvyG/Dr8Nvyu/KX8Mfxm/N78d/zw/OD8ifyd/GX8GvyZ/BD8M/yx/Dj8Yvwa/PX8/vx1/Lf8JvxJ/P/8P/wR/BP8I/xW/Br8GPym/C382Pzy/GH88/yq/H/8r/w+/Mb8R/zz/Mb8w/yE/Kb8vPyl/B781/yA/Av8Pvyw/K/8afw5/LT8xPxa/JD8yPy6/Dv8Cvzg/FL8wvyV/J/8Ffwe/DP8lPy5/HX8s/x1/Dv8avxx/Nj89Pye/H38hvwY/E78G/xg/PX8Avxs/E/8GPwN/Ef8bPxP/HP8j/x8/EP8s/yy/Lj8Vfx5/LX84/yS/Kb8rPwS/NL8ZPwd/O/8nPwg/Ab8iPxM/Hf8G/xb/NH8pfw4/Kz89vzH/DT8kvzt/N78Lfws/Kj8CPxm/FL8o/ya/DH80Pz5/Av8JPyY/EL8lPwh/Ab8nvxZ/IH8ify8/JL87Py5/I/8JPxB/Dn8JPxJ/AP88Pwa/AX86fzj/KP8uvyQ/GD8A/x2/Cf8Ovy8/AL81Py2/FX8MfyJ/J/87/yK/O787/yR/Af8gvwV/Lz8LPyM/GD8t/zN/Cj81fxP/O78nfxm/FH8Dvx//Mn8YPzt/Dv8Ufyv/FD8R/w9/AT8H/ys/Mr8QvxF/GH84Pxs/Pz8TPwU/JL8UPxb/A78vfzp/Nf8OvyG/LX8C/z7/Lj84fza/JL8E/y3/Hj8Jvz1/Nr8K/zc/NP8cPwc/HP8r/wu/B785fxJ/Oj82/zL/Gz84vyR/EX8KPxe/Ib8jfyI/Mz8WvzE/Jr8RPxR/AH8ePz+/Ev8kfxr/LX8kPxn/Lz8B/wk/AL8Dfyl/JP8MvwS/HL8T/zy/LT8l/w7/Bf89/w7/Ij8n/zK/Kn8kPyU/CL8P/wh/Ob81fx7/Lv8TPwU/GH87vzt/Df82/wH/Kz87vwK/PH84/yy/OD8E/wx/OT8KPwd/ML8JvxT/Lr88fwU/Nb8cPwM/ED83Px3/F387Pxj/PL8ovyx/L38Afwb/H38hPyT/IL8WPw7/A38ofwD/N/8lPzD/DP8APxa/O38tPxE/L/8o/yl/I78cPxw/DD85/xl/Hn85/zG/GD89Pwz/Kz8HPwy/Av8LPz5/H/8oPzW/JL8DPx9/Ir82/wV/LH8DvwA/Cf8DPxP/Mb8nvxo/NT8gPxZ/Iv8pfy+/P78Q/zT/I/8mvwB/Pn8TPwU/Gj8Ufwu/AT8yfyE/MX8L/wd/Jr8v/wP/IH8hPz6/ET8h/zc/FH8aPzj/LP8V/x//PH8+PyU/Pz8cfwA/IH8h/wK/P38M/w6/G78QPwp/Mn8Nvzp/Jn8E/zA/H78Jvxq/FX8Cfww/Ej8iPwd/Af8vPys/L380fy//Fr8zvwN/Lb8afxJ/Kn87Pyt/Lz8jPzu/BD8KPxF/MH8nfw5/Gz8HfyD/Fz84vwh/Bb8Yvyg/Lr8pfwb/Gf8+PyS/Cr8a/xY/Nf8tvzl/Av8JfwC/Mr89/zj/CH8C/zf/Nr8yvzD/AP8nPxO/Ib8HvxX/Bj8F/zd/IT8dfz6/BX8IPxI/Fz8+/xD/Nf8zvzT/PD8ufwL/Df8X/wY/D78XPz3/GX8ofwm/GD8PvxR/Gn8svwz/Gj8+Pxk/Eb8Avxe/Av80fzS/OP8QvzP/EL8YvxW/Dz8TvzT/In8t/zF/Dr8YfxN/OD8evx8/DP8rPxT/Kr8yvx8/GX8UPwW/Er85Pxm/Av8SPzN/On8gPze/CP8+fx4/Gz81vxZ/J38x/yd/A/8bvwh/An8/vxF/Cr8bfz3/Jj89/yJ/Iv8Xfw3/Bn82fw//Fj8cfz1/BH8Ffwm/Jz8JvxZ/O780fzF/Cj8yvzz/Oj8Xvy4/Bf88/x2/ND8DvzC/Hr8u/zk/MD86vwu/Kv8cfxH/J38mPye/Cj86Pzb/PP8QvwH/Bv8Dfxq/O38LfzJ/B78l/wj/Ir80fxP/KL8CPwY/AT8Bfz9/F38F/yv/BP8CfzC/Lv8Z/w7/Cb82/zX/ET8g/yK/IL8Efzm/Jv8xvzZ/O38kfz1/Pj8RPxS/Mj86vy+/Lf8bPyw/H78ufyB/DL81/xT/Fb86fyf/K78mPwS/Dj8Q/yc/HH8pvzi/LL8JPxY/O38Fvzp/Dn8xfwO/Cj8bvw+/Aj8kPzf/Or82PxP/B/8l/wu/Bf8JPwP/G387vyP/Ff8nPw9/ML8Mfzz/ET8Qvx//On8zPxF/Kj8dfze/Jb8lfyc/Kn8Qfzm/Lj8Rvzj/C78k/z3/Df8MPxf/P/8"
 },
 "assertion": "assert_bitwise_equal",
 "options": {
  "nan_payloads": true
 },
 "output_index": null
}''')

if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    try:
        import pjrt_repro  # beside this file
    except ImportError as err:
        print(f"cannot run this reproduction: {err} (pjrt_repro.py belongs beside this "
              f"file)", file=sys.stderr)
        sys.exit(2)
    sys.exit(pjrt_repro.run(DATA))
