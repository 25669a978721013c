"""Karpathy's nanoGPT train.py, single process on the CPU: the ``np.memmap`` data loader with
``torch.from_numpy``, ``nullcontext`` vs ``torch.amp.autocast``, ``torch.amp.GradScaler``
(disabled unless float16), gradient accumulation, cosine learning-rate decay with warmup,
``clip_grad_norm_``, ``estimate_loss`` under ``@torch.no_grad()``, checkpoints holding model,
optimizer, config and ``iter_num``, ``--init_from resume``, and sampling (sample.py).

The Shakespeare-char data is replaced by a generated character stream written to train.bin /
val.bin as nanoGPT's prepare.py does (uint16 token ids)."""
import argparse
import math
import os
import pickle
from contextlib import nullcontext

import numpy as np
import torch

from model import GPT, GPTConfig

parser = argparse.ArgumentParser()
parser.add_argument('--max_iters', type=int, default=8)
parser.add_argument('--init_from', default='scratch')
parser.add_argument('--dtype', default=None)
parser.add_argument('--flash', type=int, default=1)
parser.add_argument('--dropout', type=float, default=0.0)
parser.add_argument('--compile', action='store_true')
args = parser.parse_args()

out_dir = 'out'
eval_interval = 4
log_interval = 2
eval_iters = 2
always_save_checkpoint = True
gradient_accumulation_steps = 2
batch_size = 4
block_size = 16
n_layer, n_head, n_embd = 2, 2, 32
dropout = args.dropout
bias = False
learning_rate = 1e-3
max_iters = args.max_iters
weight_decay = 1e-1
beta1, beta2 = 0.9, 0.99
grad_clip = 1.0
decay_lr = True
warmup_iters = 2
lr_decay_iters = 8
min_lr = 1e-4
device = 'cpu'
# nanoGPT's default: bfloat16 on a GPU that has it, else float16 (a CPU run then uses nullcontext)
dtype = args.dtype or ('bfloat16' if torch.cuda.is_available() and torch.cuda.is_bf16_supported()
                       else 'float16')

# prepare.py: encode a character stream into uint16 ids
data_dir = 'data'
os.makedirs(data_dir, exist_ok=True)
if not os.path.exists(os.path.join(data_dir, 'meta.pkl')):
    text = ''.join('to be or not to be, that is the question. ' for _ in range(40))
    chars = sorted(list(set(text)))
    stoi = {ch: i for i, ch in enumerate(chars)}
    itos = {i: ch for i, ch in enumerate(chars)}
    n = len(text)
    ids = np.array([stoi[c] for c in text], dtype=np.uint16)
    ids[:int(n * 0.9)].tofile(os.path.join(data_dir, 'train.bin'))
    ids[int(n * 0.9):].tofile(os.path.join(data_dir, 'val.bin'))
    with open(os.path.join(data_dir, 'meta.pkl'), 'wb') as f:
        pickle.dump({'vocab_size': len(chars), 'itos': itos, 'stoi': stoi}, f)

tokens_per_iter = gradient_accumulation_steps * batch_size * block_size
print(f"tokens per iteration will be: {tokens_per_iter:,}")
os.makedirs(out_dir, exist_ok=True)
torch.manual_seed(1337)
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True
device_type = 'cuda' if 'cuda' in device else 'cpu'
ptdtype = {'float32': torch.float32, 'bfloat16': torch.bfloat16, 'float16': torch.float16}[dtype]
ctx = nullcontext() if device_type == 'cpu' else torch.amp.autocast(device_type=device_type,
                                                                  dtype=ptdtype)


def get_batch(split):
    # We recreate np.memmap every batch to avoid a memory leak
    if split == 'train':
        data = np.memmap(os.path.join(data_dir, 'train.bin'), dtype=np.uint16, mode='r')
    else:
        data = np.memmap(os.path.join(data_dir, 'val.bin'), dtype=np.uint16, mode='r')
    ix = torch.randint(len(data) - block_size, (batch_size,))
    x = torch.stack([torch.from_numpy((data[i:i + block_size]).astype(np.int64)) for i in ix])
    y = torch.stack([torch.from_numpy((data[i + 1:i + 1 + block_size]).astype(np.int64)) for i in ix])
    if device_type == 'cuda':
        x, y = x.pin_memory().to(device, non_blocking=True), y.pin_memory().to(device, non_blocking=True)
    else:
        x, y = x.to(device), y.to(device)
    return x, y


iter_num = 0
best_val_loss = 1e9
meta_path = os.path.join(data_dir, 'meta.pkl')
with open(meta_path, 'rb') as f:
    meta = pickle.load(f)
meta_vocab_size = meta['vocab_size']
model_args = dict(n_layer=n_layer, n_head=n_head, n_embd=n_embd, block_size=block_size,
                  bias=bias, vocab_size=None, dropout=dropout, flash=bool(args.flash))
if args.init_from == 'scratch':
    print("Initializing a new model from scratch")
    model_args['vocab_size'] = meta_vocab_size
    gptconf = GPTConfig(**model_args)
    model = GPT(gptconf)
elif args.init_from == 'resume':
    print(f"Resuming training from {out_dir}")
    ckpt_path = os.path.join(out_dir, 'ckpt.pt')
    checkpoint = torch.load(ckpt_path, map_location=device)
    checkpoint_model_args = checkpoint['model_args']
    for k in ['n_layer', 'n_head', 'n_embd', 'block_size', 'bias', 'vocab_size']:
        model_args[k] = checkpoint_model_args[k]
    gptconf = GPTConfig(**model_args)
    model = GPT(gptconf)
    state_dict = checkpoint['model']
    unwanted_prefix = '_orig_mod.'
    for k, v in list(state_dict.items()):
        if k.startswith(unwanted_prefix):
            state_dict[k[len(unwanted_prefix):]] = state_dict.pop(k)
    model.load_state_dict(state_dict)
    iter_num = checkpoint['iter_num']
    best_val_loss = checkpoint['best_val_loss']
model.to(device)

# the original's line: on a machine without CUDA it warns and disables itself
scaler = torch.cuda.amp.GradScaler(enabled=(dtype == 'float16'))
optimizer = model.configure_optimizers(weight_decay, learning_rate, (beta1, beta2), device_type)
if args.init_from == 'resume':
    optimizer.load_state_dict(checkpoint['optimizer'])
checkpoint = None  # free up memory

if args.compile:
    print("compiling the model... (takes a ~minute)")
    unoptimized_model = model
    model = torch.compile(model)


@torch.no_grad()
def estimate_loss():
    out = {}
    model.eval()
    for split in ['train', 'val']:
        losses = torch.zeros(eval_iters)
        for k in range(eval_iters):
            X, Y = get_batch(split)
            with ctx:
                logits, loss = model(X, Y)
            losses[k] = loss.item()
        out[split] = losses.mean()
    model.train()
    return out


def get_lr(it):
    if it < warmup_iters:
        return learning_rate * (it + 1) / (warmup_iters + 1)
    if it > lr_decay_iters:
        return min_lr
    decay_ratio = (it - warmup_iters) / (lr_decay_iters - warmup_iters)
    assert 0 <= decay_ratio <= 1
    coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))
    return min_lr + coeff * (learning_rate - min_lr)


X, Y = get_batch('train')
raw_model = model
while True:
    lr = get_lr(iter_num) if decay_lr else learning_rate
    for param_group in optimizer.param_groups:
        param_group['lr'] = lr
    if iter_num % eval_interval == 0:
        losses = estimate_loss()
        print(f"step {iter_num}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f}")
        if losses['val'] < best_val_loss or always_save_checkpoint:
            best_val_loss = losses['val']
            if iter_num > 0:
                checkpoint = {
                    'model': getattr(raw_model, '_orig_mod', raw_model).state_dict(),
                    'optimizer': optimizer.state_dict(),
                    'model_args': model_args,
                    'iter_num': iter_num,
                    'best_val_loss': best_val_loss,
                    'config': {'learning_rate': learning_rate, 'dtype': dtype},
                }
                print(f"saving checkpoint to {out_dir}")
                torch.save(checkpoint, os.path.join(out_dir, 'ckpt.pt'))
    for micro_step in range(gradient_accumulation_steps):
        with ctx:
            logits, loss = model(X, Y)
            loss = loss / gradient_accumulation_steps
        X, Y = get_batch('train')
        scaler.scale(loss).backward()
    if grad_clip != 0.0:
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)
    if iter_num % log_interval == 0:
        lossf = loss.item() * gradient_accumulation_steps
        print(f"iter {iter_num}: loss {lossf:.4f}, lr {lr:.6f}")
    iter_num += 1
    if iter_num > max_iters:
        break

# sample.py
model.eval()
stoi, itos = meta['stoi'], meta['itos']
encode = lambda s: [stoi[c] for c in s]  # noqa: E731
decode = lambda l: ''.join([itos[i] for i in l])  # noqa: E731
x = (torch.tensor(encode('to be'), dtype=torch.long, device=device)[None, ...])
with torch.no_grad():
    with ctx:
        y = raw_model.generate(x, 20, temperature=0.8, top_k=5)
        print(decode(y[0].tolist()))
