#!/usr/bin/env python3
"""Print a wulf layer file (platforms/nets/README.md) for a transformer.

    python3 experiments/nets/transformer_layers.py bert-large [--seq-len S] > platforms/nets/bert_large.layers
    python3 experiments/nets/transformer_layers.py gpt2 [--seq-len S] > platforms/nets/gpt2.layers
    python3 experiments/nets/transformer_layers.py llama2-7b [--seq-len S] > platforms/nets/llama2_7b.layers
    (and llama2-13b, llama2-70b, gpt3-175b, t5-11b; a name may be spelt with _ for -)

No torch needed: the layers and tensors are written from the published configurations and
follow the parameter layout of the named implementation exactly (Hugging Face `transformers`
for BERT, GPT-2, Llama 2 and T5; Karpathy's minGPT for GPT-3): one layer per module with
parameters, named as the implementation names it, in forward order, which for BERT, GPT-2 and
minGPT is also the order of `model.named_parameters()` (Llama's and T5's blocks register their
norms after the modules they feed: see those files' headers); nn.Linear weights are stored
(out, in), transformers' Conv1D weights (GPT-2) (in, out).  Every block also gets a
parameter-free `attention` layer (QK^T and softmax(.)V), named after the module whose forward
computes it, between the Q/K/V projection(s) and the output projection.  Each transformer block
is a `unit` (sharded data parallelism: PyTorch FSDP wraps each block); the embeddings before
the first block are a unit of their own, the final norm and the head another.

Sources:
  bert-large: Hugging Face google-bert/bert-large-uncased config.json, class BertModel (with
    its pooler); Devlin et al. 2019, "BERT: Pre-training of Deep Bidirectional Transformers
    for Language Understanding", section 3 and appendix A.2.
  gpt2: Hugging Face openai-community/gpt2 config.json, class GPT2Model, plus its tied
    lm_head; Radford et al. 2019, "Language Models are Unsupervised Multitask Learners",
    sections 2.1-2.3 and Table 2; the openai/gpt-2 README (on the 117M figure).
  llama2-7b, -13b, -70b: Hugging Face meta-llama/Llama-2-7b-hf, -13b-hf, -70b-hf config.json,
    class LlamaForCausalLM; Touvron et al. 2023, "Llama 2: Open Foundation and Fine-Tuned Chat
    Models", arXiv:2307.09288, Table 1 and section 2.2.
  gpt3-175b: Karpathy's minGPT, mingpt/model.py (commit 37baab7, 2023-01-08), class GPT with
    n_layer 96, n_head 96, n_embd 12288 and the issue's vocab_size 50000, block_size 2048;
    Brown et al. 2020, "Language Models are Few-Shot Learners", arXiv:2005.14165, Table 2.1.
  t5-11b: Hugging Face t5-11b config.json, class T5ForConditionalGeneration (T5 v1.0);
    Raffel et al. 2020, "Exploring the Limits of Transfer Learning with a Unified Text-to-Text
    Transformer", JMLR 21(140), sections 2.1, 3.1.2, 3.7; the T5 code's random_spans_helper
    (google-research/text-to-text-transfer-transformer, t5/data/preprocessors.py) for the
    targets' length.
  Activations: Korthikanti et al. 2022, "Reducing Activation Recomputation in Large
    Transformer Models", arXiv:2205.05198, section 4.1.

Flops per sample (one sequence of S tokens; a multiply-add is 2 flops):
  linear 2*in*out*S (+ out*S with a bias); attention 4*S*S*width (QK^T and softmax(.)V; width
  = heads * head size, the hidden size but in T5-11B; cross-attention 4*T*S*width; softmax,
  masking and T5's relative position bias not counted); LayerNorm and RMSNorm 4*S*hidden;
  embedding lookups 0, the sum of the k embeddings (k-1)*S*hidden, charged to the last
  embedding layer; GELU, SiLU, ReLU, SwiGLU's product, rotary embeddings, residual additions
  and dropout not counted.  Backward: the format's default, twice the forward.

Activations per sample (activations=, elements of whatever type): what PyTorch autograd saves
  for the backward pass without activation checkpointing, in the unfused computation that
  Korthikanti et al. count (section 4.1), a tensor counted once, at the first layer that saves
  it: a Linear its input; a norm its input and its per-token statistics (LayerNorm mean and
  rstd, RMSNorm rstd: a fused kernel's); an embedding its indices; attention Q, K, V (K and V
  at all heads), the softmax output and, with dropout, the mask and the dropped output; an
  activation function its input (ReLU its output), as a fused kernel does; a dropout its mask,
  charged to the layer whose output it drops; an elementwise product both operands; lm_head
  also the cross-entropy's log-softmax (S*vocab_size) where the model has that loss.
"""
import argparse
import sys

CONFIGS = {
    # google-bert/bert-large-uncased config.json (hidden_dropout_prob and
    # attention_probs_dropout_prob 0.1)
    "bert-large": dict(vocab_size=30522, hidden_size=1024, num_hidden_layers=24,
                       num_attention_heads=16, intermediate_size=4096,
                       max_position_embeddings=512, type_vocab_size=2, seq_len=128),
    # openai-community/gpt2 config.json (n_inner null: 4 * n_embd; attn_pdrop, embd_pdrop and
    # resid_pdrop 0.1)
    "gpt2": dict(vocab_size=50257, n_embd=768, n_layer=12, n_head=12, n_positions=1024,
                 seq_len=1024),
    # meta-llama/Llama-2-7b-hf config.json; seq_len: Touvron et al. Table 1, context length 4k
    "llama2-7b": dict(vocab_size=32000, hidden_size=4096, intermediate_size=11008,
                      num_hidden_layers=32, num_attention_heads=32, num_key_value_heads=32,
                      max_position_embeddings=4096, seq_len=4096, size="7B", published="6.74 B"),
    # meta-llama/Llama-2-13b-hf config.json
    "llama2-13b": dict(vocab_size=32000, hidden_size=5120, intermediate_size=13824,
                       num_hidden_layers=40, num_attention_heads=40, num_key_value_heads=40,
                       max_position_embeddings=4096, seq_len=4096, size="13B", published="13.0 B"),
    # meta-llama/Llama-2-70b-hf config.json (grouped-query attention: 8 key/value heads)
    "llama2-70b": dict(vocab_size=32000, hidden_size=8192, intermediate_size=28672,
                       num_hidden_layers=80, num_attention_heads=64, num_key_value_heads=8,
                       max_position_embeddings=4096, seq_len=4096, size="70B", published="69.0 B"),
    # minGPT GPT(n_layer=96, n_head=96, n_embd=12288): Brown et al. Table 2.1, GPT-3 175B
    # (d_head 128, n_ctx 2048); vocab_size and block_size the issue's; minGPT's default
    # embd_pdrop, resid_pdrop and attn_pdrop 0.1; d_ff = 4 * n_embd (minGPT's Block)
    "gpt3-175b": dict(vocab_size=50000, block_size=2048, n_layer=96, n_head=96, n_embd=12288,
                      seq_len=2048),
    # t5-11b config.json (dropout_rate 0.1, feed_forward_proj relu, tie_word_embeddings true);
    # seq_len: Raffel et al. 3.1.2, inputs of 512 tokens; span corruption (3.3.4, 3.7): 15% of
    # the tokens in spans of mean length 3
    "t5-11b": dict(vocab_size=32128, d_model=1024, d_kv=128, d_ff=65536, num_layers=24,
                   num_decoder_layers=24, num_heads=128, relative_attention_num_buckets=32,
                   n_positions=512, seq_len=512, noise_density=0.15, mean_noise_span_length=3.0),
}


class Net:
    def __init__(self):
        self.layers = []  # (name, kind, forward flops, activations, [shapes])
        self.units = []   # (name, index of its first layer)

    def unit(self, name):
        self.units.append((name, len(self.layers)))

    def add(self, name, kind, flops, acts, *shapes):
        self.layers.append((name, kind, flops, acts, list(shapes)))

    def linear(self, name, n_in, n_out, S, acts, conv1d=False, bias=True):
        """nn.Linear stores its weight (out, in); transformers' Conv1D stores (in, out)."""
        weight = (n_in, n_out) if conv1d else (n_out, n_in)
        if bias:
            self.add(name, "linear", 2 * n_in * n_out * S + n_out * S, acts, weight, (n_out,))
        else:
            self.add(name, "linear", 2 * n_in * n_out * S, acts, weight)

    def norm(self, name, hidden, S, extra=0):
        """LayerNorm (weight and bias): saves its input, and a mean and an rstd per token."""
        self.add(name, "norm", 4 * S * hidden, S * hidden + 2 * S + extra, (hidden,), (hidden,))

    def rms_norm(self, name, hidden, S, extra=0):
        """RMSNorm (one weight vector): saves its input and an rstd per token."""
        self.add(name, "norm", 4 * S * hidden, S * hidden + S + extra, (hidden,))

    def unit_activations(self, name):
        """The activations of the unit called name: its layers' sum."""
        at = [i for i, (n, _) in enumerate(self.units) if n == name][0]
        end = self.units[at + 1][1] if at + 1 < len(self.units) else len(self.layers)
        return sum(l[3] for l in self.layers[self.units[at][1]:end])


def bert_large(c, S):
    H, I, L = c["hidden_size"], c["intermediate_size"], c["num_hidden_layers"]
    a = c["num_attention_heads"]
    n = Net()
    n.add("embeddings.word_embeddings", "embedding", 0, S, (c["vocab_size"], H))
    n.add("embeddings.position_embeddings", "embedding", 0, S, (c["max_position_embeddings"], H))
    # word + token_type + position: 2 additions per element
    n.add("embeddings.token_type_embeddings", "embedding", 2 * S * H, S, (c["type_vocab_size"], H))
    n.norm("embeddings.LayerNorm", H, S, extra=S * H)  # + the embeddings' dropout mask
    for i in range(L):
        p = "encoder.layer.%d." % i
        n.unit("encoder.layer.%d" % i)
        # query, key and value read the same input, saved once
        for proj, acts in (("query", S * H), ("key", 0), ("value", 0)):
            n.linear(p + "attention.self." + proj, H, H, S, acts)
        n.add(p + "attention.self", "attention", 4 * S * S * H, 3 * S * H + 3 * a * S * S)
        n.linear(p + "attention.output.dense", H, H, S, 2 * S * H)  # + its dropout mask
        n.norm(p + "attention.output.LayerNorm", H, S)
        n.linear(p + "intermediate.dense", H, I, S, S * H + S * I)  # + the GELU's input
        n.linear(p + "output.dense", I, H, S, S * I + S * H)  # + its dropout mask
        n.norm(p + "output.LayerNorm", H, S)
    n.unit("pooler")
    n.linear("pooler.dense", H, H, 1, 2 * H)  # BertPooler: the first token only; + tanh's output
    return n


def gpt2(c, S):
    H, L, V, a = c["n_embd"], c["n_layer"], c["vocab_size"], c["n_head"]
    n = Net()
    n.add("wte", "embedding", 0, S, (V, H))
    # wte + wpe: 1 addition; + the embeddings' dropout mask
    n.add("wpe", "embedding", S * H, S + S * H, (c["n_positions"], H))
    for i in range(L):
        p = "h.%d." % i
        n.unit("h.%d" % i)
        n.norm(p + "ln_1", H, S)
        n.linear(p + "attn.c_attn", H, 3 * H, S, S * H, conv1d=True)
        n.add(p + "attn", "attention", 4 * S * S * H, 3 * S * H + 3 * a * S * S)
        n.linear(p + "attn.c_proj", H, H, S, 2 * S * H, conv1d=True)  # + resid_dropout's mask
        n.norm(p + "ln_2", H, S)
        n.linear(p + "mlp.c_fc", H, 4 * H, S, S * H + 4 * S * H, conv1d=True)  # + the GELU's input
        n.linear(p + "mlp.c_proj", 4 * H, H, S, 4 * S * H + S * H, conv1d=True)  # + dropout's mask
    n.unit("head")
    n.norm("ln_f", H, S)
    n.add("lm_head", "linear", 2 * H * V * S, S * H + S * V)  # weight tied to wte, no bias
    return n


def llama2(c, S):
    H, I, L, V = c["hidden_size"], c["intermediate_size"], c["num_hidden_layers"], c["vocab_size"]
    a, kv = c["num_attention_heads"], c["num_key_value_heads"]
    d = H // a  # head_dim 128
    n = Net()
    n.add("model.embed_tokens", "embedding", 0, S, (V, H))
    for i in range(L):
        p = "model.layers.%d." % i
        n.unit("model.layers.%d" % i)
        n.rms_norm(p + "input_layernorm", H, S)
        # q_proj, k_proj and v_proj read the same input, saved once
        n.linear(p + "self_attn.q_proj", H, a * d, S, S * H, bias=False)
        n.linear(p + "self_attn.k_proj", H, kv * d, S, 0, bias=False)
        n.linear(p + "self_attn.v_proj", H, kv * d, S, 0, bias=False)
        # Q, K and V (K and V repeated to all heads), the softmax output; no dropout
        n.add(p + "self_attn", "attention", 4 * S * S * H, 3 * S * H + a * S * S)
        n.linear(p + "self_attn.o_proj", a * d, H, S, S * H, bias=False)
        n.rms_norm(p + "post_attention_layernorm", H, S)
        # down(silu(gate(x)) * up(x)): gate saves x (up's input too) and SiLU its input;
        # the product saves silu(gate(x)) and up(x); down its input
        n.linear(p + "mlp.gate_proj", H, I, S, S * H + S * I, bias=False)
        n.linear(p + "mlp.up_proj", H, I, S, 2 * S * I, bias=False)
        n.linear(p + "mlp.down_proj", I, H, S, S * I, bias=False)
    n.unit("head")
    n.rms_norm("model.norm", H, S)
    n.linear("lm_head", H, V, S, S * H + S * V, bias=False)  # untied
    return n


def gpt3(c, S):
    H, L, V, a = c["n_embd"], c["n_layer"], c["vocab_size"], c["n_head"]
    n = Net()
    n.add("transformer.wte", "embedding", 0, S, (V, H))
    # wte + wpe: 1 addition; + drop's mask
    n.add("transformer.wpe", "embedding", S * H, S + S * H, (c["block_size"], H))
    for i in range(L):
        p = "transformer.h.%d." % i
        n.unit("transformer.h.%d" % i)
        n.norm(p + "ln_1", H, S)
        n.linear(p + "attn.c_attn", H, 3 * H, S, S * H)
        n.add(p + "attn", "attention", 4 * S * S * H, 3 * S * H + 3 * a * S * S)
        n.linear(p + "attn.c_proj", H, H, S, 2 * S * H)  # + resid_dropout's mask
        n.norm(p + "ln_2", H, S)
        n.linear(p + "mlp.c_fc", H, 4 * H, S, S * H + 4 * S * H)  # + the GELU's input
        n.linear(p + "mlp.c_proj", 4 * H, H, S, 4 * S * H + S * H)  # + mlp.dropout's mask
    n.unit("head")
    n.norm("transformer.ln_f", H, S)
    n.linear("lm_head", H, V, S, S * H + S * V, bias=False)  # not tied to wte
    return n


def t5_targets_length(c, S):
    """random_spans_helper(inputs_length=S, noise_density, mean_noise_span_length, 1, 1)[1]:
    the span-corruption targets (EOS included) of inputs of S tokens (EOS included)."""
    def lengths(tokens):
        noise = int(round(tokens * c["noise_density"]))
        spans = int(round(noise / c["mean_noise_span_length"]))
        return tokens - noise + spans + 1, noise + spans + 1
    tokens = S - 1
    while lengths(tokens + 1)[0] <= S:
        tokens += 1
    return lengths(tokens)[1]


def t5(c, S):
    h, F, V, a = c["d_model"], c["d_ff"], c["vocab_size"], c["num_heads"]
    w = a * c["d_kv"]  # the attention's width, 16384
    T = t5_targets_length(c, S)
    B = c["relative_attention_num_buckets"]
    n = Net()
    # the encoder's lookup; + its dropout mask
    n.add("shared", "embedding", 0, S + S * h, (V, h))

    def self_attention(p, S, first):
        n.rms_norm(p + "layer.0.layer_norm", h, S)
        n.linear(p + "layer.0.SelfAttention.q", h, w, S, S * h, bias=False)
        n.linear(p + "layer.0.SelfAttention.k", h, w, S, 0, bias=False)
        n.linear(p + "layer.0.SelfAttention.v", h, w, S, 0, bias=False)
        if first:  # the stack's position bias, computed once per batch and passed on
            n.add(p + "layer.0.SelfAttention.relative_attention_bias", "embedding", 0, 0, (B, a))
        n.add(p + "layer.0.SelfAttention", "attention", 4 * S * S * w, 3 * S * w + 3 * a * S * S)
        n.linear(p + "layer.0.SelfAttention.o", w, h, S, S * w + S * h, bias=False)  # + dropout's mask

    def feed_forward(p, ff, S):
        n.rms_norm(p + "layer.%d.layer_norm" % ff, h, S)
        # its input, ReLU's output, the dropout's mask between ReLU and wo
        n.linear(p + "layer.%d.DenseReluDense.wi" % ff, h, F, S, S * h + 2 * S * F, bias=False)
        n.linear(p + "layer.%d.DenseReluDense.wo" % ff, F, h, S, S * F + S * h, bias=False)

    for i in range(c["num_layers"]):
        p = "encoder.block.%d." % i
        n.unit("encoder.block.%d" % i)
        self_attention(p, S, i == 0)
        feed_forward(p, 1, S)
    n.unit("encoder.final_layer_norm")
    n.rms_norm("encoder.final_layer_norm", h, S, extra=S * h)  # + its dropout mask
    for i in range(c["num_decoder_layers"]):
        p = "decoder.block.%d." % i
        n.unit("decoder.block.%d" % i)
        if i == 0:  # the decoder's lookup in shared; + its dropout mask
            n.add("decoder.embed_tokens", "embedding", 0, T + T * h)
        self_attention(p, T, i == 0)
        n.rms_norm(p + "layer.1.layer_norm", h, T)
        n.linear(p + "layer.1.EncDecAttention.q", h, w, T, T * h, bias=False)
        # k and v of every block read the encoder's output, saved once
        n.linear(p + "layer.1.EncDecAttention.k", h, w, S, S * h if i == 0 else 0, bias=False)
        n.linear(p + "layer.1.EncDecAttention.v", h, w, S, 0, bias=False)
        n.add(p + "layer.1.EncDecAttention", "attention", 4 * T * S * w,
              T * w + 2 * S * w + 3 * a * T * S)
        n.linear(p + "layer.1.EncDecAttention.o", w, h, T, T * w + T * h, bias=False)
        feed_forward(p, 2, T)
    n.unit("head")
    n.rms_norm("decoder.final_layer_norm", h, T, extra=T * h)  # + its dropout mask
    n.add("lm_head", "linear", 2 * h * V * T, T * h + T * V)  # weight tied to shared
    return n


BUILD = {"bert-large": bert_large, "gpt2": gpt2, "llama2-7b": llama2, "llama2-13b": llama2,
         "llama2-70b": llama2, "gpt3-175b": gpt3, "t5-11b": t5}


def size(shape):
    v = 1
    for d in shape:
        v *= d
    return v


def grouped(v):
    """12345678 -> '12 345 678', as the headers write counts."""
    return "{:,}".format(v).replace(",", " ")


def korthikanti(S, h, a):
    """Section 4.1: s*b*h*(34 + 5*a*s/h) bytes per transformer layer, b = 1, as (bytes,
    elements with dropout, elements without): 16*s*h + 2*a*s*s 16-bit values and 2*s*h + a*s*s
    one-byte dropout masks; without dropout the masks and the dropped softmax go: 16*s*h + a*s*s."""
    return S * h * 34 + 5 * a * S * S, 18 * S * h + 3 * a * S * S, 16 * S * h + a * S * S


def percent(ours, theirs):
    return "%+.3g%%" % (100.0 * (ours - theirs) / theirs)


def paragraphs(text, width=92):
    """Fills the paragraphs of text to width: a line starting with | starts a paragraph, an
    empty line stays one; a number written in groups (6 738 415 616) or b = 1 is not broken."""
    import re
    import textwrap
    for kept in (r"\d{1,3}(?: \d{3})+\b", r"\b\w = (?=\w)"):
        text = re.sub(kept, lambda m: m.group(0).replace(" ", "\u00a0"), text)
    paras, lines = [], []
    for line in text.split("\n"):
        if line.startswith("|") or not line:
            if lines:
                paras.append(" ".join(lines))
            lines = [line[1:]] if line else []
            if not line:
                paras.append("")
        else:
            lines.append(line)
    if lines:
        paras.append(" ".join(lines))
    return "\n".join(textwrap.fill(p, width, break_long_words=False, break_on_hyphens=False)
                     for p in paras).replace("\u00a0", " ")


def bert_gpt2_activations(model, c, S, net):
    """The activations paragraph of bert-large and gpt2 (their per-block totals checked)."""
    if model == "bert-large":
        h, a, I = c["hidden_size"], c["num_attention_heads"], c["intermediate_size"]
        first = "encoder.layer.1"
    else:
        h, a, I, first = c["n_embd"], c["n_head"], 4 * c["n_embd"], "h.1"
    block = net.unit_activations(first)
    assert block == 10 * S * h + 2 * S * I + 3 * a * S * S + 4 * S and I == 4 * h
    kb, kd, _ = korthikanti(S, h, a)
    total = sum(l[3] for l in net.layers)
    if model == "bert-large":
        where = """\
Units (`unit`, sharded data parallelism as PyTorch FSDP wraps each block): encoder.layer.N;
the embeddings before the first are a unit of their own, the pooler another.
|Activations (activations=, per sample): as the generator's docstring counts them, in the
unfused BertModel: dropout 0.1 everywhere (config.json hidden_dropout_prob and
attention_probs_dropout_prob), its masks counted one element per value (PyTorch keeps a byte);
an embedding its indices (S); LayerNorm its input and a mean and rstd per token (S*hidden +
2*S); query, key and value their shared input once (S*hidden); attention.self Q, K, V
(3*S*hidden), the softmax output, its dropout mask and the dropped output (3*heads*S*S);
intermediate.dense its input and the GELU's (S*hidden + S*4096); output.dense and
attention.output.dense their input and their dropout's mask; pooler.dense its input and
tanh's output (2*hidden, the first token)."""
    else:
        where = """\
Units (`unit`, sharded data parallelism as PyTorch FSDP wraps each block): h.N; the
embeddings before the first are a unit of their own, ln_f and lm_head the unit head.
|Activations (activations=, per sample): as the generator's docstring counts them, in the
unfused GPT2LMHeadModel: dropout 0.1 everywhere (config.json attn_pdrop, embd_pdrop,
resid_pdrop), its masks counted one element per value (PyTorch keeps a byte); wte and wpe
their indices (S each), wpe also the embeddings' dropout mask; LayerNorm its input and a mean
and rstd per token (S*hidden + 2*S); c_attn its input; attn Q, K, V (3*S*hidden), the softmax
output, its dropout mask and the dropped output (3*heads*S*S); attn.c_proj its input and
resid_dropout's mask; mlp.c_fc its input and the GELU's (gelu_new counted as a fused GELU:
Hugging Face's NewGELUActivation, written as separate operations, keeps more); mlp.c_proj its
input and the dropout's mask; lm_head its input and the cross-entropy's log-softmax
(S*vocab_size)."""
    return paragraphs(where + """
|Per block: 10*S*hidden + 2*S*intermediate + 3*heads*S*S + 4*S = %(block)s elements. Korthikanti
et al. 2022, arXiv:2205.05198, section 4.1: s*b*h*(34 + 5*a*s/h) = %(kb)s bytes a layer at
b = 1 (16-bit values, one-byte masks), i.e. 18*S*hidden + 3*heads*S*S = %(kd)s elements: ours
adds the two LayerNorms' means and rstds (4*S), which the paper leaves out (%(pc)s).
|All layers: %(total)s elements per sample.""" % dict(
        block=grouped(block), kb=grouped(kb), kd=grouped(kd), pc=percent(block, kd), total=grouped(total)))


def header(model, c, S, default_S, net):
    """The net's name, the file's header (where every number comes from), samples, inputs, outputs."""
    params = sum(size(s) for l in net.layers for s in l[4])
    total = sum(l[3] for l in net.layers)
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
    if model == "gpt2":
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
    if model.startswith("llama2"):
        H, I, a = c["hidden_size"], c["intermediate_size"], c["num_attention_heads"]
        kv, V, L = c["num_key_value_heads"], c["vocab_size"], c["num_hidden_layers"]
        block = net.unit_activations("model.layers.1")
        assert block == 8 * S * H + 4 * S * I + a * S * S + 2 * S
        kb, kd, kn = korthikanti(S, H, a)
        gqa = ("num_key_value_heads %d: grouped-query attention, k_proj and v_proj %d * 128 = %d wide"
               % (kv, kv, kv * 128)) if kv < a else ("num_key_value_heads %d: multi-head attention" % kv)
        text = """\
Llama 2 %(size)s: Hugging Face LlamaForCausalLM, the language-model head and its loss included.

Configuration: Hugging Face meta-llama/Llama-2-%(lower)s-hf, config.json: vocab_size 32000,
hidden_size %(H)d, intermediate_size %(I)d, num_hidden_layers %(L)d, num_attention_heads %(a)d,
num_key_value_heads %(kv)d, max_position_embeddings 4096, hidden_act silu,
tie_word_embeddings false (attention_bias and attention_dropout are not in the file:
LlamaConfig's defaults, false and 0.0). Touvron et al. 2023, "Llama 2: Open Foundation and
Fine-Tuned Chat Models", arXiv:2307.09288, Table 1: %(size)s, context length 4k, 2.0T tokens,
GQA in 34B and 70B only; section 2.2: the Llama 1 architecture, pre-normalization with RMSNorm,
the SwiGLU activation, rotary positional embeddings (no position table: the rotary embedding
has no parameters), plus the longer context and GQA.
|Each block: input_layernorm (RMSNorm, one weight vector, no bias); q_proj, k_proj, v_proj,
o_proj without biases, head_dim %(H)d / %(a)d = 128, %(gqa)s; post_attention_layernorm; the
SwiGLU MLP down_proj(silu(gate_proj(x)) * up_proj(x)), no biases. Then model.norm and lm_head
(%(V)dx%(H)d, untied from embed_tokens, no bias).
|Parameters: %(params)s here (LlamaForCausalLM, lm_head included), %(B)s B as published for the
Hugging Face checkpoint (the issue's figure; the paper names the model %(size)s).
|Layers in forward order: LlamaDecoderLayer registers its two norms after self_attn and mlp, so
model.named_parameters() lists a block's input_layernorm and post_attention_layernorm
weights last (and DDP buckets them so); this file lists them where they run.

Sequence length S = %(S)d (default %(dS)d: Table 1's context length; max_position_embeddings
bounds it).
|samples: left out (the format's default, 1 0): the paper gives 2 trillion tokens of
pretraining (Table 1, section 2.1) but no corpus size and no epochs, so no count of S-token
sequences in an epoch follows from it.
|inputs: S token ids. outputs: S * vocab_size logits (%(S)d * 32000), lm_head included
since training a language model computes them."""
        name = "Llama 2 %s" % c["size"]
        B = "%.2f" % (params / 1e9) if params < 1e10 else "%.1f" % (params / 1e9)
        assert B + " B" == c["published"]
        text %= dict(size=c["size"], lower=c["size"].lower(), H=H, I=I, L=L, a=a, kv=kv, V=V,
                     gqa=gqa, params=grouped(params), B=B, S=S, dS=default_S)
        acts = """\
Units (`unit`, sharded data parallelism as PyTorch FSDP wraps each block): model.layers.N;
embed_tokens before the first is a unit of its own, model.norm and lm_head the unit head.
|Activations (activations=, per sample): as the generator's docstring counts them. No dropout:
the paper names none and LlamaModel has none but the attention's, at 0.0 (PyTorch's dropout
at p = 0 returns its input and keeps no mask). RMSNorm its input and an rstd per token
(S*hidden + S), as a fused RMSNorm keeps them (Hugging Face's LlamaRMSNorm, written as
separate operations in float32, keeps more); q_proj the input of q, k and v (S*hidden);
self_attn Q and K after the rotary embedding and V, K and V repeated to all heads as
Hugging Face's repeat_kv does before the matmuls (3*S*hidden), and the softmax output
(heads*S*S, once: it is also the second matmul's input; Hugging Face's eager attention
softmaxes in float32 and keeps its cast copy too, not counted; flash attention keeps neither);
o_proj its input; gate_proj its input and SiLU's input (S*hidden + S*intermediate); up_proj the
product's two operands (2*S*intermediate); down_proj its input; lm_head its input and the
cross-entropy's log-softmax (S*vocab_size).
|Per block: 8*S*hidden + 4*S*intermediate + heads*S*S + 2*S = %(block)s elements. Korthikanti
et al. 2022, arXiv:2205.05198, section 4.1: s*b*h*(34 + 5*a*s/h) = %(kb)s bytes a layer at
b = 1, which counts dropout (one-byte masks) and a 4*h GELU MLP: 18*S*hidden + 3*heads*S*S =
%(kd)s elements; without dropout 16*S*hidden + heads*S*S = %(kn)s elements. Ours is %(pn)s
on the latter: the norms' rstds (2*S), and SwiGLU's MLP keeps S*hidden + 4*S*intermediate
where the paper's keeps 9*S*hidden.
|All layers: %(total)s elements per sample.""" % dict(
            block=grouped(block), kb=grouped(kb), kd=grouped(kd), kn=grouped(kn),
            pn=percent(block, kn), total=grouped(total))
        return name, paragraphs(text), paragraphs(acts), None, S, S * V
    if model == "gpt3-175b":
        H, a, L, V = c["n_embd"], c["n_head"], c["n_layer"], c["vocab_size"]
        block = net.unit_activations("transformer.h.1")
        assert block == 18 * S * H + 3 * a * S * S + 4 * S
        kb, kd, _ = korthikanti(S, H, a)
        lm = V * H
        text = """\
GPT-3 175B as minGPT builds it: Karpathy's minGPT, mingpt/model.py, class GPT with n_layer 96,
n_head 96, n_embd 12288, vocab_size 50000, block_size 2048, its loss included.

Configuration: Brown et al. 2020, "Language Models are Few-Shot Learners", arXiv:2005.14165,
Table 2.1, GPT-3 175B: n_params 175.0B, n_layers 96, d_model 12288, n_heads 96, d_head 128;
context window n_ctx 2048 tokens (section 2.1, which also gives d_ff = 4 * d_model).
minGPT (github.com/karpathy/minGPT at 37baab7, 2023-01-08) has no GPT-3 model_type: its table
stops at gpt2-xl, gopher-44m and three small ones; its README's notes on the paper give "GPT-3:
96 layers, 96 heads, with d_model of 12,288 (175B parameters)". So n_layer, n_head and n_embd
are given as such (model_type None). vocab_size and block_size minGPT leaves to its user
(GPT.get_default_config: "these options must be filled in externally"): 50 000 and 2 048, as
the issue requires (the paper states no vocabulary size of its own, section 2.1 takes GPT-2's
reversible tokenization; GPT-2's BPE has 50 257 tokens, which would add 2 * 257 * 12288 =
6 316 032 parameters).
|minGPT's modules, nn.Linear weights (out, in): per block ln_1 (LayerNorm, weight and bias),
attn.c_attn (12288 to 3 * 12288, bias),
attn.c_proj (bias), ln_2, mlp.c_fc (to 4 * 12288, bias), mlp.c_proj (bias); before them
transformer.wte and transformer.wpe (block_size x n_embd), after them transformer.ln_f and
lm_head (nn.Linear(n_embd, vocab_size, bias=False), not tied to wte: minGPT never ties it).
minGPT's attention is dense in every layer, as here; GPT-3 alternated dense and locally
banded sparse attention (section 2.1).
|Parameters: %(params)s here; Table 2.1: 175.0B. minGPT prints %(mp)sM ("we don't count the
decoder parameters in lm_head": %(lm)s fewer). GPT-2's layout (lm_head tied to wte) with its
50 257 tokens would have %(tied)s: Table 2.1's 175.0B is the nominal size, which neither
count gives to its decimal.

Sequence length S = %(S)d (default %(dS)d: section 2.1's context window n_ctx; block_size bounds
it).
|samples: left out (the format's default, 1 0): the paper trains on 300 billion tokens drawn
from five datasets at fixed weights, some seen less than once and others two or three times
(Table 2.2, "Epochs elapsed when training for 300B tokens"): no single epoch.
|inputs: S token ids. outputs: S * vocab_size logits (%(S)d * 50000), lm_head included since
training a language model computes them.""" % dict(
            params=grouped(params), mp="%.2f" % ((params - lm) / 1e6), lm=grouped(lm), S=S,
            dS=default_S, tied=grouped(params - lm - (V - 50257) * H))
        acts = """\
Units (`unit`, sharded data parallelism as PyTorch FSDP wraps each block): transformer.h.N;
wte and wpe before the first are a unit of their own, ln_f and lm_head the unit head.
|Activations (activations=, per sample): as the generator's docstring counts them, in
minGPT's training configuration: dropout 0.1 everywhere (GPT.get_default_config's
embd_pdrop, resid_pdrop and attn_pdrop; Table 2.1 and section 2.1 give no dropout rate), its
masks counted one element per value (PyTorch keeps a byte); wte and wpe their indices (S
each), wpe also drop's mask; LayerNorm its input and a mean and rstd per token (S*hidden +
2*S); attn.c_attn its input; attn Q, K, V (3*S*hidden), the softmax output, attn_dropout's
mask and the dropped output (3*heads*S*S; masked_fill's S x S causal mask, one per batch, not
counted); attn.c_proj its input and resid_dropout's mask; mlp.c_fc its input and the GELU's
(NewGELU counted as a fused GELU: written as separate operations it keeps more); mlp.c_proj
its input and mlp.dropout's mask; lm_head its input and the cross-entropy's log-softmax
(S*vocab_size).
|Per block: 18*S*hidden + 3*heads*S*S + 4*S = %(block)s elements. Korthikanti et al. 2022,
arXiv:2205.05198, section 4.1: s*b*h*(34 + 5*a*s/h) = %(kb)s bytes a layer at b = 1 (16-bit
values, one-byte masks), i.e. 18*S*hidden + 3*heads*S*S = %(kd)s elements: ours adds the two
LayerNorms' means and rstds (4*S), which the paper leaves out (%(pc)s).
|All layers: %(total)s elements per sample.""" % dict(
            block=grouped(block), kb=grouped(kb), kd=grouped(kd), pc=percent(block, kd),
            total=grouped(total))
        return "GPT-3 175B (minGPT)", paragraphs(text), paragraphs(acts), None, S, S * V
    # t5-11b
    h, F, a, V = c["d_model"], c["d_ff"], c["num_heads"], c["vocab_size"]
    w = a * c["d_kv"]
    T = t5_targets_length(c, S)
    enc = net.unit_activations("encoder.block.1")
    dec = net.unit_activations("decoder.block.1")
    assert enc == 6 * S * h + 4 * S * w + 3 * S * F + 3 * a * S * S + 2 * S
    assert dec == 9 * T * h + 6 * T * w + 2 * S * w + 3 * T * F + 3 * a * T * T + 3 * a * T * S + 3 * T
    kb, kd, _ = korthikanti(S, h, a)
    kw = 6 * S * h + 4 * S * w + 2 * S * F + 3 * a * S * S
    text = """\
T5-11B: Hugging Face T5ForConditionalGeneration (T5 v1.0), encoder, decoder and the
language-model head with its loss.

Configuration: Hugging Face t5-11b, config.json: vocab_size 32128, d_model 1024, d_kv 128,
d_ff 65536, num_layers 24 (num_decoder_layers 24), num_heads 128,
relative_attention_num_buckets 32, dropout_rate 0.1, feed_forward_proj relu, n_positions 512,
tie_word_embeddings (default true). Raffel et al. 2020, "Exploring the Limits of Transfer
Learning with a Unified Text-to-Text Transformer", JMLR 21(140), section 3.7 (its Table 14's
T5-11B): d_model 1024, a 24-layer encoder and decoder, d_kv 128, d_ff 65,536, 128-headed
attention, "about 11 billion parameters"; section 2.1: layer normalization that only rescales
(no additive bias), no biases, relative position embeddings: 32 per head, shared across the
layers (Hugging Face: a 32x128 table in the first block of each stack, its bias passed on to
the others). The attention is 128 heads of d_kv 128: q, k, v project 1024 to 16384, o back.
The 32128x1024 word embedding, `shared`, is the encoder's and the decoder's embed_tokens and
lm_head's weight (T5 v1.0; lm_head's input is scaled by d_model**-0.5 for it).
|Parameters: %(params)s here (shared once); the paper: about 11 billion.
|Layers in forward order: T5Attention registers relative_attention_bias after o, and each
T5Layer* its layer_norm after its attention or DenseReluDense, so model.named_parameters()
lists them later (and DDP buckets them so); this file lists them where they run: the bias
table between v and the scores of the first block's self-attention, each layer_norm first.

Sequence lengths: S = %(S)d input tokens (default %(dS)d: section 3.1.2, a maximum sequence length
of 512, also the 11B's in section 3.7; n_positions bounds it) and T = %(T)d target tokens: the
span-corruption objective of sections 3.3.4 and 3.7 (15%% of the tokens corrupted, mean span
length 3) makes of inputs of 512 tokens targets of 114, as the T5 code's random_spans_helper
(t5/data/preprocessors.py, noise_density 0.15, mean_noise_span_length 3, one sentinel per span,
EOS included) computes them: 568 raw tokens, 85 corrupted in 28 spans. The paper itself gives
no target length; T follows S through the same helper.
|samples: left out (the format's default, 1 0): C4 is given as about 750 GB of text (section
2.2), not in tokens, so no count of S-token inputs in an epoch follows from it.
|inputs: S + T token ids (input_ids and decoder_input_ids). outputs: T * vocab_size logits
(%(T)d * 32128).""" % dict(params=grouped(params), S=S, dS=default_S, T=T)
    acts = """\
Units (`unit`, sharded data parallelism as PyTorch FSDP wraps each T5Block):
encoder.block.N and decoder.block.N; shared before the first is a unit of its own, the
encoder's final_layer_norm another, decoder.final_layer_norm and lm_head the unit head; the
decoder's lookup (decoder.embed_tokens, no tensor of its own: shared's) opens
decoder.block.0.
|Activations (activations=, per sample of S input and T target tokens): as the generator's
docstring counts them, in the unfused T5 with dropout 0.1 (config.json dropout_rate) after
each embedding, in the attention, between ReLU and wo, after each sublayer and after each
stack's final norm, its masks counted one element per value (PyTorch keeps a byte). T5's
RMSNorm its input and an rstd per token (S*d_model + S), as a fused RMSNorm keeps them
(Hugging Face's T5LayerNorm, written as separate operations in float32, keeps more); q the
input of q, k and v; SelfAttention Q, K, V (3*S*16384), the softmax output, its dropout mask
and the dropped output (3*heads*S*S); o its input and its sublayer's dropout mask; wi its input,
ReLU's output and the dropout mask between them and wo (S*d_model + 2*S*d_ff); wo its input
and the dropout mask; EncDecAttention Q (T*16384), K and V of the encoder's output (2*S*16384)
and 3*heads*T*S; EncDecAttention.k of decoder.block.0 the encoder's output, which every
block's k and v read (S*d_model, once); the relative bias lookups keep S x S bucket indices
once a batch: 0; lm_head its input and the cross-entropy's log-softmax (T*vocab_size).
|Per encoder block: 6*S*d_model + 4*S*16384 + 3*S*d_ff + 3*heads*S*S + 2*S = %(enc)s elements;
per decoder block: 9*T*d_model + 6*T*16384 + 2*S*16384 + 3*T*d_ff + 3*heads*T*T + 3*heads*T*S
+ 3*T = %(dec)s (decoder.block.0 also the encoder's output, S*d_model, and the decoder's
lookup, T + T*d_model). Korthikanti et al. 2022, arXiv:2205.05198,
section 4.1 (an encoder or decoder-only layer): s*b*h*(34 + 5*a*s/h) = %(kb)s bytes a layer at
b = 1, 18*S*h + 3*a*S*S = %(kd)s elements with h = d_model; the formula takes the attention
width as h and d_ff as 4*h, T5-11B's are 16*h and 64*h. Its terms with T5's widths,
6*S*h + 4*S*16384 + 2*S*d_ff + 3*a*S*S = %(kw)s elements: the encoder block is that %(pw)s, the
mask of T5's dropout between ReLU and wo (S*d_ff) and the rstds (2*S). The paper has no
cross-attention layer to compare the decoder's with.
|All layers: %(total)s elements per sample.""" % dict(
        enc=grouped(enc), dec=grouped(dec), kb=grouped(kb), kd=grouped(kd), kw=grouped(kw),
        pw=percent(enc, kw), total=grouped(total))
    return "T5-11B", paragraphs(text), paragraphs(acts), None, S + T, T * V


FLOPS_NOTES = {
    "llama2": """\
# Flops per sample (one sequence of S tokens; a multiply-add is 2 flops): linear
# 2*in*out*S, no biases (lm_head 2*hidden*32000*S); attention 4*S*S*hidden for QK^T and
# softmax(.)V at all heads (softmax and masking not counted; the full S x S is computed);
# RMSNorm 4*S*hidden (square, sum, scale by 1/rms and by the weight); the embedding lookup 0;
# SiLU, SwiGLU's product, the rotary embedding and residual additions not counted. Backward:
# the default, twice the forward.
# Layers and tensors: Hugging Face module names; weights as stored, nn.Linear (out, in). An
# `attention` layer, named after the module that computes it, has no tensors.""",
    "gpt3": """\
# Flops per sample (one sequence of S tokens; a multiply-add is 2 flops): linear
# 2*in*out*S, + out*S with a bias (lm_head has none: 2*12288*50000*S); attention
# 4*S*S*hidden for QK^T and softmax(.)V (softmax and masking not counted; the full S x S is
# computed); LayerNorm 4*S*hidden; embedding lookups 0, the sum of the embeddings 1 flop per
# addition per element, charged to transformer.wpe; GELU, residual additions and dropout not
# counted. Backward: the default, twice the forward.
# Layers and tensors: minGPT's module names in model.named_parameters() order; weights as
# stored, nn.Linear (out, in). An `attention` layer, named after the module that computes
# it, has no tensors.""",
    "t5": """\
# Flops per sample (S input and T target tokens; a multiply-add is 2 flops): linear
# 2*in*out*S in the encoder, 2*in*out*T in the decoder but EncDecAttention's k and v
# (2*in*out*S, of the encoder's output), no biases (lm_head 2*1024*32128*T, its weight
# shared's); attention 4*S*S*16384 in the encoder, 4*T*T*16384 for the decoder's
# self-attention, 4*T*S*16384 for its cross-attention (softmax, masking and adding the
# relative position bias not counted; the full T x T is computed); RMSNorm 4*S*d_model
# (square, sum, scale by 1/rms and by the weight); embedding lookups 0; ReLU, residual
# additions, lm_head's input scaling and dropout not counted. Backward: the default, twice
# the forward.
# Layers and tensors: Hugging Face module names; weights as stored, nn.Linear (out, in). An
# `attention` layer, named after the module that computes it, has no tensors.""",
}


def write_layers(out, net):
    """The net's `unit` and `layer` lines, in the layer file's format."""
    units = dict((first, unit) for unit, first in net.units)
    for i, (name, kind, flops, acts, shapes) in enumerate(net.layers):
        if i in units:
            out.write("unit %s\n" % units[i])
        out.write(" ".join(["layer", name, kind, str(flops), "activations=%d" % acts] +
                           ["x".join(map(str, s)) for s in shapes]) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model", choices=sorted(CONFIGS), type=lambda s: s.replace("_", "-"))
    ap.add_argument("--seq-len", type=int, help="tokens per sample (default: per model; "
                    "t5-11b: the input's, the targets' follow)")
    a = ap.parse_args()
    c = CONFIGS[a.model]
    S = a.seq_len or c["seq_len"]
    limit = c.get("max_position_embeddings") or c.get("n_positions") or c["block_size"]
    if not 1 <= S <= limit:
        ap.error("--seq-len must be in 1..%d" % limit)
    net = BUILD[a.model](c, S)
    command = "python3 experiments/nets/transformer_layers.py " + a.model
    if a.seq_len:
        command += " --seq-len %d" % a.seq_len
    out_file = a.model.replace("-", "_")

    out = sys.stdout

    def comment(text):
        for line in text.split("\n"):
            out.write(("# " + line).rstrip() + "\n")

    if a.model in ("bert-large", "gpt2"):
        name, text, samples, inputs, outputs = header(a.model, c, S, c["seq_len"], net)
        comment(text)
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
""" % (" (pooler.dense: the first token only, S = 1)" if a.model == "bert-large"
            else " (lm_head has none: 2*768*50257*S)"))
        out.write("#\n")
        comment(bert_gpt2_activations(a.model, c, S, net))
    else:
        name, text, acts, samples, inputs, outputs = header(a.model, c, S, c["seq_len"], net)
        comment(text)
        out.write("#\n" + FLOPS_NOTES[a.model.split("-")[0]] + "\n#\n")
        comment(acts)
    out.write("""#
# Generated, from the repository root, by: %s > platforms/nets/%s.layers
wulf-layers 1
""" % (command, out_file))
    out.write("name %s\n" % name)
    if samples is not None:
        out.write("samples %d 0\n" % samples)
    out.write("inputs %d\noutputs %d\n" % (inputs, outputs))
    write_layers(out, net)
    params = sum(size(s) for l in net.layers for s in l[4])
    fwd = sum(l[2] for l in net.layers)
    out.write("# parameters: %d\n# forward flops per sample: %d\n# layers: %d\n# tensors: %d\n"
              % (params, fwd, len(net.layers), sum(len(l[4]) for l in net.layers)))


if __name__ == "__main__":
    main()
