#!/usr/bin/env python3
"""Print a wulf layer file (platforms/nets/README.md) for a transformer.

    python3 experiments/nets/transformer_layers.py bert-large [--seq-len S] > platforms/nets/bert_large.layers
    python3 experiments/nets/transformer_layers.py gpt2 [--seq-len S] > platforms/nets/gpt2.layers

No torch needed: the layers and tensors are written from the published configurations and
follow the Hugging Face `transformers` parameter layout exactly: one layer per module with
parameters, named as Hugging Face names it, in the order of `model.named_parameters()`;
Linear weights (BERT) are stored (out, in), Conv1D weights (GPT-2) (in, out).  Every block
also gets a parameter-free `attention` layer (QK^T and softmax(.)V), named after the module
whose forward computes it, between the Q/K/V projection(s) and the output projection.

Sources:
  bert-large: Hugging Face google-bert/bert-large-uncased config.json, class BertModel (with
    its pooler); Devlin et al. 2019, "BERT: Pre-training of Deep Bidirectional Transformers
    for Language Understanding", section 3 and appendix A.2.
  gpt2: Hugging Face openai-community/gpt2 config.json, class GPT2Model, plus its tied
    lm_head; Radford et al. 2019, "Language Models are Unsupervised Multitask Learners",
    sections 2.1-2.3 and Table 2; the openai/gpt-2 README (on the 117M figure).

Flops per sample (one sequence of S tokens; a multiply-add is 2 flops):
  linear 2*in*out*S (+ out*S with a bias); attention 4*S*S*hidden (softmax not counted);
  LayerNorm 4*S*hidden; embedding lookups 0, the sum of the k embeddings (k-1)*S*hidden,
  charged to the last embedding layer; GELU, residual additions and dropout not counted.
  Backward: the format's default, twice the forward.
"""
import argparse
import sys

CONFIGS = {
    # google-bert/bert-large-uncased config.json
    "bert-large": dict(vocab_size=30522, hidden_size=1024, num_hidden_layers=24,
                       num_attention_heads=16, intermediate_size=4096,
                       max_position_embeddings=512, type_vocab_size=2, seq_len=128),
    # openai-community/gpt2 config.json (n_inner null: 4 * n_embd)
    "gpt2": dict(vocab_size=50257, n_embd=768, n_layer=12, n_head=12, n_positions=1024,
                 seq_len=1024),
}


class Net:
    def __init__(self):
        self.layers = []  # (name, kind, forward flops, [shapes])

    def add(self, name, kind, flops, *shapes):
        self.layers.append((name, kind, flops, list(shapes)))

    def linear(self, name, n_in, n_out, S, conv1d=False):
        """nn.Linear stores its weight (out, in); transformers' Conv1D stores (in, out)."""
        weight = (n_in, n_out) if conv1d else (n_out, n_in)
        self.add(name, "linear", 2 * n_in * n_out * S + n_out * S, weight, (n_out,))

    def norm(self, name, hidden, S):
        self.add(name, "norm", 4 * S * hidden, (hidden,), (hidden,))


def bert_large(c, S):
    H, I, L = c["hidden_size"], c["intermediate_size"], c["num_hidden_layers"]
    n = Net()
    n.add("embeddings.word_embeddings", "embedding", 0, (c["vocab_size"], H))
    n.add("embeddings.position_embeddings", "embedding", 0, (c["max_position_embeddings"], H))
    # word + token_type + position: 2 additions per element
    n.add("embeddings.token_type_embeddings", "embedding", 2 * S * H, (c["type_vocab_size"], H))
    n.norm("embeddings.LayerNorm", H, S)
    for i in range(L):
        p = "encoder.layer.%d." % i
        for proj in ("query", "key", "value"):
            n.linear(p + "attention.self." + proj, H, H, S)
        n.add(p + "attention.self", "attention", 4 * S * S * H)
        n.linear(p + "attention.output.dense", H, H, S)
        n.norm(p + "attention.output.LayerNorm", H, S)
        n.linear(p + "intermediate.dense", H, I, S)
        n.linear(p + "output.dense", I, H, S)
        n.norm(p + "output.LayerNorm", H, S)
    n.linear("pooler.dense", H, H, 1)  # BertPooler: the first token only
    return n


def gpt2(c, S):
    H, L, V = c["n_embd"], c["n_layer"], c["vocab_size"]
    n = Net()
    n.add("wte", "embedding", 0, (V, H))
    n.add("wpe", "embedding", S * H, (c["n_positions"], H))  # wte + wpe: 1 addition
    for i in range(L):
        p = "h.%d." % i
        n.norm(p + "ln_1", H, S)
        n.linear(p + "attn.c_attn", H, 3 * H, S, conv1d=True)
        n.add(p + "attn", "attention", 4 * S * S * H)
        n.linear(p + "attn.c_proj", H, H, S, conv1d=True)
        n.norm(p + "ln_2", H, S)
        n.linear(p + "mlp.c_fc", H, 4 * H, S, conv1d=True)
        n.linear(p + "mlp.c_proj", 4 * H, H, S, conv1d=True)
    n.norm("ln_f", H, S)
    n.add("lm_head", "linear", 2 * H * V * S)  # weight tied to wte, no bias
    return n


def size(shape):
    v = 1
    for d in shape:
        v *= d
    return v


def header(model, c, S, default_S):
    """The net's name, the file's header (where every number comes from), samples, inputs, outputs."""
    if model == "bert-large":
        tokens_epoch = 256 * 512 * 1000000 // 40
        text = """\
BERT-large, uncased: Hugging Face BertModel (with its pooler, without pre-training heads).

Configuration: Hugging Face google-bert/bert-large-uncased, config.json: vocab_size 30522,
hidden_size 1024, num_hidden_layers 24, num_attention_heads 16, intermediate_size 4096,
max_position_embeddings 512, type_vocab_size 2 (hidden_act gelu, layer_norm_eps 1e-12, no
effect here). Devlin et al. 2019, "BERT: Pre-training of Deep Bidirectional Transformers for
Language Understanding", section 3: BERT-LARGE L=24, H=1024, A=16, feed-forward size 4H.
Parameters: 335 141 888 here (BertModel). The paper publishes "340M": it rounds, and counts
the pre-training heads, which BertForPreTraining adds: the masked-LM transform (1024x1024
dense + bias + LayerNorm = 1 051 648), the decoder bias 30 522 (its weight is tied to the word
embeddings) and the next-sentence classifier 2x1024 + 2 = 2 050: 336 226 108 in all.

Sequence length S = %(S)d (default %(dS)d: Devlin et al., appendix A.2, pre-train 90%% of
the steps at 128 tokens, the rest at 512; max_position_embeddings 512 bounds it).
samples: Devlin et al. A.2: 1 000 000 steps of batch 256 sequences of 512 tokens "is
approximately 40 epochs over the 3.3 billion word corpus" (BooksCorpus 800M + English
Wikipedia 2 500M words, section 3.1). An epoch is 256 * 1e6 / 40 = 6 400 000 sequences of
512 tokens = 256 * 512 * 1e6 / 40 = %(te)d tokens (the paper rounds 256 * 512 to
128,000), so %(te)d / %(S)d = %(samples)d sequences of S tokens. No test set is sourced: 0.
inputs: S token ids (segment ids and attention mask not counted). outputs: S * hidden
(last_hidden_state; the pooled 1024 not counted)."""
        samples = tokens_epoch // S
        text = text % dict(S=S, dS=default_S, te=tokens_epoch, samples=samples)
        return "BERT-large uncased", text, samples, S, S * c["hidden_size"]
    text = """\
GPT-2 small: Hugging Face GPT2Model, plus the tied lm_head of GPT2LMHeadModel.

Configuration: Hugging Face openai-community/gpt2, config.json: vocab_size 50257, n_positions
1024 (n_ctx 1024), n_embd 768, n_layer 12, n_head 12, n_inner null (= 4 * n_embd = 3072),
activation_function gelu_new, tie_word_embeddings (default true). Radford et al. 2019,
"Language Models are Unsupervised Multitask Learners": section 2.3, vocabulary 50 257,
context 1024 tokens, batch 512; Table 2, smallest model 12 layers, d_model 768, "117M".
Parameters: 124 439 808 here (GPT2Model; lm_head adds none, its weight is wte). The openai/gpt-2
README: "our original parameter counts were wrong due to an error (in our previous blog posts
and paper). Thus you may have seen small referred to as 117M". OpenAI does not say what the
error was; the paper (section 3) calls the smallest model "equivalent to the original GPT",
and the same 12x768 stack with GPT-1's vocabulary 40 478 and 512 positions and no final
LayerNorm (GPT-1's layout) has 116 534 784, which rounds to 117M.

Sequence length S = %(S)d (default %(dS)d: the context of section 2.3; n_positions bounds it).
samples: left out (the format's default, 1 0): the paper gives WebText as "slightly over 8
million documents for a total of 40 GB of text" (section 2.1) but no token count, no steps
and no epochs, so no honest count of S-token sequences in an epoch follows from it.
inputs: S token ids. outputs: S * vocab_size logits (%(S)d * 50257), lm_head included
since training a language model computes them."""
    return "GPT-2 small", text % dict(S=S, dS=default_S), None, S, S * c["vocab_size"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model", choices=sorted(CONFIGS))
    ap.add_argument("--seq-len", type=int, help="tokens per sample (default: per model)")
    a = ap.parse_args()
    c = CONFIGS[a.model]
    S = a.seq_len or c["seq_len"]
    limit = c.get("max_position_embeddings") or c["n_positions"]
    if not 1 <= S <= limit:
        ap.error("--seq-len must be in 1..%d" % limit)
    net = (bert_large if a.model == "bert-large" else gpt2)(c, S)
    command = "python3 experiments/nets/transformer_layers.py " + a.model
    if a.seq_len:
        command += " --seq-len %d" % a.seq_len
    name, text, samples, inputs, outputs = header(a.model, c, S, c["seq_len"])

    out = sys.stdout
    for line in text.split("\n"):
        out.write(("# " + line).rstrip() + "\n")
    out.write("""#
# Flops per sample (one sequence of S tokens; a multiply-add is 2 flops): linear
# 2*in*out*S, + out*S with a bias%s; attention
# 4*S*S*hidden for QK^T and softmax(.)V (softmax and masking not counted; the full S x S is
# computed); LayerNorm 4*S*hidden; embedding lookups 0, the sum of the embeddings 1 flop per
# addition per element, charged to the last embedding layer; GELU, residual additions and
# dropout not counted. Backward: the default, twice the forward.
# Layers and tensors: Hugging Face module names in model.named_parameters() order; weights
# as stored: nn.Linear (out, in), transformers' Conv1D (in, out). An `attention` layer,
# named after the module that computes it, has no tensors.
#
# Generated, from the repository root, by: %s > platforms/nets/%s.layers
wulf-layers 1
""" % ((" (pooler.dense: the first token only, S = 1)" if a.model == "bert-large"
        else " (lm_head has none: 2*768*50257*S)"),
       command, a.model.replace("-", "_")))
    out.write("name %s\n" % name)
    if samples is not None:
        out.write("samples %d 0\n" % samples)
    out.write("inputs %d\noutputs %d\n" % (inputs, outputs))
    for name, kind, flops, shapes in net.layers:
        out.write(" ".join(["layer", name, kind, str(flops)] +
                           ["x".join(map(str, s)) for s in shapes]) + "\n")
    params = sum(size(s) for l in net.layers for s in l[3])
    fwd = sum(l[2] for l in net.layers)
    out.write("# parameters: %d\n# forward flops per sample: %d\n# layers: %d\n# tensors: %d\n"
              % (params, fwd, len(net.layers), sum(len(l[3]) for l in net.layers)))


if __name__ == "__main__":
    main()
