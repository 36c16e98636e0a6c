#!/usr/bin/env python3
"""Write the handmade backend traces (testdata/README.md, handmade/): the ops kprof capture
records for each backend (capture/workloads.c: sdpa_chunk, sdpa_cudnn_iter, conv_iter,
mm_iter) and the ops PyTorch records for SDPBackend FLASH / EFFICIENT / CUDNN, slot for slot,
one ProfilerStep each, with made-up kernel times.  Run from the repository root."""
import json

BF = "c10::BFloat16"


class Trace:
    def __init__(self):
        self.ev, self.ts, self.ext, self.corr, self.gpu_ts = [], 0, 0, 0, 1000000

    def op(self, name, slots, backend, kernels=(), children=()):
        """slots: (dims or None, type, concrete); kernels: (name, dur_us) launched directly."""
        self.ext += 1
        ext, t0 = self.ext, self.ts
        self.ts += 1
        args = {"External id": ext,
                "Input Dims": [s[0] or [] for s in slots],
                "Input type": [s[1] for s in slots],
                "Concrete Inputs": [s[2] for s in slots],
                "kprof backend": backend, "kprof compute": "bf16"}
        for k, dur in kernels:
            self.corr += 1
            self.ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel",
                            "pid": 1, "tid": 1, "ts": self.ts, "dur": 1,
                            "args": {"External id": ext, "correlation": self.corr}})
            self.ev.append({"ph": "X", "cat": "kernel", "name": k, "pid": 0, "tid": 7,
                            "ts": self.gpu_ts, "dur": dur,
                            "args": {"External id": ext, "correlation": self.corr,
                                     "stream": 7, "device": 0}})
            self.gpu_ts += dur + 1
            self.ts += 2
        for c in children:
            c(self)
        self.ts += 1
        self.ev.append({"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1,
                        "ts": t0, "dur": self.ts - t0, "args": args})
        self.ts += 1

    def write(self, path):
        self.ev.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#0",
                        "pid": 1, "tid": 1, "ts": 0, "dur": self.ts + 1, "args": {}})
        doc = {"schemaVersion": 1,
               "deviceProperties": [{"id": 0, "name": "NVIDIA H200", "totalGlobalMem": 150754820096,
                                     "computeMajor": 9, "computeMinor": 0, "numSms": 132}],
               "traceEvents": sorted(self.ev, key=lambda e: (e["ts"], -e["dur"]))}
        with open(path, "w") as f:
            f.write('{"schemaVersion":1,"deviceProperties":' +
                    json.dumps(doc["deviceProperties"], separators=(",", ":")) +
                    ',\n"traceEvents":[\n' +
                    ",\n".join(json.dumps(e, separators=(",", ":")) for e in doc["traceEvents"]) +
                    "\n]}\n")


def T(*d, ty=BF):
    return (list(d), ty, "")


def S(v, ty="Scalar"):
    return (None, ty, v)


NONE = (None, "", "")

# ---- kprof capture: sdpa bf16 B=2 H=4 H_kv=2 S_q=S_k=128 D=64 causal, fwd+bwd ----
B, H, HKV, SQ, SK, D = 2, 4, 2, 128, 128, 64
G = H // HKV
NB, MQ = B * HKV, G * SQ
TOP = [T(B, H, SQ, D), T(B, HKV, SK, D), T(B, HKV, SK, D), NONE, S("0."), S("True"), NONE,
       S("True")]


def sdpa_reference(t, wrap_bwd=True):
    be = "cublas-math-sdpa"
    math = TOP[:3] + [NONE, S("0."), S("True"), NONE, NONE, S("True")]
    t.op("aten::scaled_dot_product_attention", TOP, be, children=[
        lambda t: t.op("aten::_scaled_dot_product_attention_math", math, be, children=[
            lambda t: t.op("aten::bmm", [T(NB, MQ, D), T(NB, D, SK)], be,
                           [("nvjet_sm90_tst_64x64_64x8_1x1_h_bz_TNN", 9)]),
            lambda t: t.op("aten::_safe_softmax", [T(NB, MQ, SK, ty="float"), S("-1"), NONE], be,
                           [("kprof_softmax_fwd", 7)]),
            lambda t: t.op("aten::bmm", [T(NB, MQ, SK), T(NB, SK, D)], be,
                           [("nvjet_sm90_tst_64x64_64x8_1x1_h_bz_NNN", 8)])])])

    def bwd(t):
        t.op("BmmBackward0", [T(NB, MQ, D)], be, children=[
            lambda t: t.op("aten::bmm", [T(NB, MQ, D), T(NB, D, SK)], be,
                           [("nvjet_sm90_tst_64x64_64x8_1x1_h_bz_TNN", 9)]),
            lambda t: t.op("aten::bmm", [T(NB, SK, MQ), T(NB, MQ, D)], be,
                           [("nvjet_sm90_tst_64x64_64x8_1x1_h_bz_NTN", 10)])])
        t.op("SoftmaxBackward0", [T(NB, MQ, SK)], be, children=[
            lambda t: t.op("aten::_softmax_backward_data",
                           [T(NB, MQ, SK, ty="float"), T(NB, MQ, SK), S("-1"), S("6")], be,
                           [("kprof_softmax_bwd", 6)])])
        t.op("BmmBackward0", [T(NB, MQ, SK)], be, children=[
            lambda t: t.op("aten::bmm", [T(NB, MQ, SK), T(NB, SK, D)], be,
                           [("nvjet_sm90_tst_64x64_64x8_1x1_h_bz_NNN", 8)]),
            lambda t: t.op("aten::bmm", [T(NB, SK, MQ), T(NB, MQ, D)], be,
                           [("nvjet_sm90_tst_64x64_64x8_1x1_h_bz_NTN", 10)])])
    if wrap_bwd:
        t.op("kprof::scaled_dot_product_attention_math_backward", TOP, be, children=[bwd])
    else:
        bwd(t)


def sdpa_cudnn(t):
    be = "cudnn"
    scale = "%g" % (1 / D ** 0.5)
    fwd = TOP[:3] + [NONE, S("True"), S("0."), S("True"), S("False"), S(scale)]
    q = T(B, H, SQ, D)
    t.op("aten::scaled_dot_product_attention", TOP, be, children=[
        lambda t: t.op("aten::_scaled_dot_product_cudnn_attention", fwd, be,
                       [("cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x64_4x1x1_cga1x1x1_kernel0_0", 5)])])
    bwd = [q, q, TOP[1], TOP[2], q, T(B, H, SQ, 1, ty="float"), T(ty="Long"), T(ty="Long"), NONE,
           NONE, NONE, S(str(SQ)), S(str(SK)), S("0."), S("True"), S(scale)]
    t.op("ScaledDotProductCudnnAttentionBackward0", [q], be, children=[
        lambda t: t.op("aten::_scaled_dot_product_cudnn_attention_backward", bwd, be,
                       [("cudnn_generated_fort_native_sdpa_sm90_flash_bprop_wgmma_f16_knob_3_64x128x64_4x1x1_cga1x1x1_kernel0_0", 12)])])


# ---- conv bf16 32x64x56x56 -> 64, 3x3: the same ops on both backends ----
def conv(t, cudnn):
    be = "cudnn" if cudnn else "im2col+cublas"
    fs = [T(32, 64, 56, 56), T(64, 64, 3, 3), NONE, S("[1, 1]", "ScalarList"),
          S("[1, 1]", "ScalarList"), S("[1, 1]", "ScalarList"), S("False"),
          S("[0, 0]", "ScalarList"), S("1")]
    bs = [T(32, 64, 56, 56), fs[0], fs[1], S("[0]", "ScalarList")] + fs[3:] + \
        [S("[True, True, False]", "ScalarList")]
    if cudnn:
        t.op("aten::convolution", fs, be, [("sm90_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nchw", 30)])
        t.op("aten::convolution_backward", bs, be,
             [("sm90_xmma_dgrad_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nchw", 31),
              ("sm90_xmma_wgrad_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nchw", 33)])
    else:
        t.op("aten::convolution", fs, be, [("kprof_im2col", 80), ("nvjet_sm90_tst_128x128_64x4_1x1_h_bz_NNN", 200),
                                           ("kprof_swap01", 40)])
        t.op("aten::convolution_backward", bs, be,
             [("kprof_swap01", 40), ("nvjet_sm90_tst_128x128_64x4_1x1_h_bz_NTN", 210),
              ("nvjet_sm90_tst_128x128_64x4_1x1_h_bz_TNN", 205), ("kprof_col2im", 90)])


# ---- matmul addmm+gelu 4096^3: cublas (bias rows, GEMM, gelu_ inside) vs cublaslt ----
def mm_gelu(t, lt):
    be = "cublaslt" if lt else "cublas"
    s = [T(4096), T(4096, 4096), T(4096, 4096), S("1"), S("1"), S("True")]
    if lt:
        t.op("aten::_addmm_activation", s, be, [("nvjet_sm90_tst_256x128_64x4_2x1_v_bz_gelubias_TNN", 180)])
    else:
        t.op("aten::_addmm_activation", s, be, [("kprof_bias_rows", 12), ("nvjet_sm90_tst_256x128_64x4_2x1_v_bz_TNN", 175)],
             children=[lambda t: t.op("aten::gelu_", [T(4096, 4096), NONE], be, [("kprof_activation", 25)])])


def kprof_pair():
    r = Trace()
    sdpa_reference(r)
    conv(r, False)
    mm_gelu(r, False)
    r.write("testdata/handmade/backends_reference.json")
    c = Trace()
    sdpa_cudnn(c)
    conv(c, True)
    mm_gelu(c, True)
    c.write("testdata/handmade/backends_cudnn.json")
    u = Trace()
    sdpa_reference(u, wrap_bwd=False)
    u.write("testdata/handmade/backends_reference_nowrap.json")


# ---- PyTorch SDPA backends, B=2 H=8 S=256 D=64 causal bf16, as torch records them ----
PB, PH, PS, PD = 2, 8, 256, 64


def torch_sdpa(t, backend, dur_f, dur_b):
    q = T(PB, PH, PS, PD)
    top = [q, q, q, NONE, S("0."), S("True"), NONE, S("False")]
    lse = T(PB, PH, PS, ty="float")
    if backend == "flash":
        f = ("aten::_scaled_dot_product_flash_attention", [q, q, q, S("0."), S("True"), S("False"), NONE])
        bq = T(PB, PS, PH, PD)
        inner = ("aten::_flash_attention_forward",
                 [bq, bq, bq, NONE, NONE, S(str(PS)), S(str(PS)), S("0."), S("True"), S("False"),
                  NONE, NONE, NONE, NONE, NONE])
        node = "ScaledDotProductFlashAttentionBackward0"
        b = ("aten::_scaled_dot_product_flash_attention_backward",
             [q, q, q, q, q, lse, NONE, NONE, S(str(PS)), S(str(PS)), S("0."), S("True"),
              T(ty="Long"), T(ty="Long"), NONE])
        kf, kb = "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<64, 128, 128, 4, cutlass::bfloat16_t> >, false, true, false, false, true, true, false, false>(pytorch_flash::Flash_fwd_params)", \
            "void pytorch_flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<64, 128, 128, 8, 4, 4, 4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<64, 128, 128, 8, cutlass::bfloat16_t> >, true, true, false, false, false, true, false>(pytorch_flash::Flash_bwd_params)"
    elif backend == "efficient":
        f = ("aten::_scaled_dot_product_efficient_attention", [q, q, q, NONE, S("True"), S("0."), S("True"), NONE])
        inner = None
        node = "ScaledDotProductEfficientAttentionBackward0"
        b = ("aten::_scaled_dot_product_efficient_attention_backward",
             [q, q, q, q, NONE, q, lse, T(ty="Long"), T(ty="Long"), S("0."),
              S("[True, True, True, False]", "GenericList"), S("True"), NONE])
        kf, kb = "fmha_cutlassF_bf16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<cutlass::bfloat16_t, cutlass::arch::Sm80, true, 64, 64, 64, true, true>::Params)", \
            "fmha_cutlassB_bf16_aligned_64x64_k64_sm80(PyTorchMemEffAttention::AttentionBackwardKernel<cutlass::arch::Sm80, cutlass::bfloat16_t, true, false, true, 64, 64, 64, false>::Params)"
    else:
        f = ("aten::_scaled_dot_product_cudnn_attention",
             [q, q, q, NONE, S("True"), S("0."), S("True"), S("False"), NONE])
        inner = None
        node = "ScaledDotProductCudnnAttentionBackward0"
        b = ("aten::_scaled_dot_product_cudnn_attention_backward",
             [q, q, q, q, q, T(PB, PH, PS, 1, ty="float"), T(ty="Long"), T(ty="Long"), NONE, NONE,
              NONE, S(str(PS)), S(str(PS)), S("0."), S("True"), NONE])
        kf, kb = "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x64_4x1x1_cga1x1x1_kernel0_0", \
            "cudnn_generated_fort_native_sdpa_sm90_flash_bprop_wgmma_f16_knob_3_64x128x64_4x1x1_cga1x1x1_kernel0_0"
    if inner:
        fwd = lambda t: t.op(f[0], f[1], None, children=[lambda t: t.op(inner[0], inner[1], None, [(kf, dur_f)])])
    else:
        fwd = lambda t: t.op(f[0], f[1], None, [(kf, dur_f)])
    t.op("aten::scaled_dot_product_attention", top, None, children=[fwd])
    t.op(node, [q], None, children=[lambda t: t.op(b[0], b[1], None, [(kb, dur_b)])])


def torch_traces():
    for be, df, db in (("flash", 20, 55), ("efficient", 34, 90), ("cudnn", 15, 41)):
        t = Trace()
        torch_sdpa(t, be, df, db)
        # PyTorch records no kprof args
        for e in t.ev:
            e.get("args", {}).pop("kprof backend", None)
            e.get("args", {}).pop("kprof compute", None)
        t.write("testdata/handmade/torch_sdpa_%s.json" % be)


kprof_pair()
torch_traces()
