#!/usr/bin/python3
"""One attention core of GPT-2-small's shape (12 heads of 64) at a given
sequence length, for bench/attention.sh: inputs q, k, v [1, 12, S, 64]
(and for the padding form an additive mask [1, 1, 1, S]), output
softmax(mask(q·kᵀ / 8)) · v [1, 12, S, 64], written as the exporters do:

  causal   GPT-2: Where(bias[:, :, :S, :S], scores, finfo.min), the bool
           lower triangle a constant
  additive Llama: scores + triu(finfo.min, 1), a constant
  padding  BERT: scores + mask, the mask a graph input

Usage: attention_block.py --seq S --form causal|additive|padding --out FILE
"""
import argparse

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

HEADS, DIM = 12, 64


def build(seq, form):
    shape = [1, HEADS, seq, DIM]
    inputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, shape)
              for n in ("q", "k", "v")]
    inits = [numpy_helper.from_array(np.array(np.sqrt(DIM), np.float32), "scale")]
    nodes = [
        helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
        helper.make_node("MatMul", ["q", "kt"], ["qk"]),
        helper.make_node("Div", ["qk", "scale"], ["scores"]),
    ]
    fmin = np.finfo(np.float32).min
    if form == "causal":
        tril = np.tril(np.ones((seq, seq), bool)).reshape(1, 1, seq, seq)
        inits += [numpy_helper.from_array(tril, "bias"),
                  numpy_helper.from_array(np.array(fmin, np.float32), "fill")]
        nodes.append(helper.make_node("Where", ["bias", "scores", "fill"], ["masked"]))
    elif form == "additive":
        inits.append(numpy_helper.from_array(
            np.triu(np.full((seq, seq), fmin, np.float32), 1), "causal_mask"))
        nodes.append(helper.make_node("Add", ["scores", "causal_mask"], ["masked"]))
    else:
        inputs.append(helper.make_tensor_value_info("mask", TensorProto.FLOAT,
                                                    [1, 1, 1, seq]))
        nodes.append(helper.make_node("Add", ["scores", "mask"], ["masked"]))
    nodes += [helper.make_node("Softmax", ["masked"], ["probs"], axis=-1),
              helper.make_node("MatMul", ["probs", "v"], ["out"])]
    out = helper.make_tensor_value_info("out", TensorProto.FLOAT, shape)
    graph = helper.make_graph(nodes, f"attention_{form}_{seq}", inputs, [out], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                             ir_version=8)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seq", type=int, required=True)
    p.add_argument("--form", choices=["causal", "additive", "padding"],
                   default="causal")
    p.add_argument("--out", required=True)
    a = p.parse_args()
    save(build(a.seq, a.form), a.out)


if __name__ == "__main__":
    main()
