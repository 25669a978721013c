"""pytorch/examples language_translation (src/model.py + main.py): a Transformer translator —
``nn.Transformer`` with token embeddings scaled by sqrt(d), sinusoidal positional encoding,
``generate_square_subsequent_mask``, source/target padding masks, label-smoothed
cross-entropy with ``ignore_index``, Adam(betas=(0.9, 0.98), eps=1e-9), ``pad_sequence`` in the
collate function, and greedy decoding. Toy sentence pairs replace Multi30k/spaCy."""
import argparse
import math

import torch
import torch.nn as nn
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader

PAD_IDX, BOS_IDX, EOS_IDX, UNK_IDX = 1, 2, 3, 0


class PositionalEncoding(nn.Module):
    def __init__(self, emb_size, dropout, maxlen=5000):
        super(PositionalEncoding, self).__init__()
        den = torch.exp(- torch.arange(0, emb_size, 2) * math.log(10000) / emb_size)
        pos = torch.arange(0, maxlen).reshape(maxlen, 1)
        pos_embedding = torch.zeros((maxlen, emb_size))
        pos_embedding[:, 0::2] = torch.sin(pos * den)
        pos_embedding[:, 1::2] = torch.cos(pos * den)
        pos_embedding = pos_embedding.unsqueeze(-2)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer('pos_embedding', pos_embedding)

    def forward(self, token_embedding):
        return self.dropout(token_embedding + self.pos_embedding[:token_embedding.size(0), :])


class TokenEmbedding(nn.Module):
    def __init__(self, vocab_size, emb_size):
        super(TokenEmbedding, self).__init__()
        self.embedding = nn.Embedding(vocab_size, emb_size)
        self.emb_size = emb_size

    def forward(self, tokens):
        return self.embedding(tokens.long()) * math.sqrt(self.emb_size)


class Translator(nn.Module):
    def __init__(self, num_encoder_layers, num_decoder_layers, embed_size, num_heads,
                 src_vocab_size, tgt_vocab_size, dim_feedforward, dropout):
        super(Translator, self).__init__()
        self.transformer = nn.Transformer(d_model=embed_size, nhead=num_heads,
                                          num_encoder_layers=num_encoder_layers,
                                          num_decoder_layers=num_decoder_layers,
                                          dim_feedforward=dim_feedforward, dropout=dropout)
        self.ff = nn.Linear(embed_size, tgt_vocab_size)
        self.src_embedding = TokenEmbedding(src_vocab_size, embed_size)
        self.tgt_embedding = TokenEmbedding(tgt_vocab_size, embed_size)
        self.positional_encoding = PositionalEncoding(embed_size, dropout)
        for p in self.parameters():
            if p.dim() > 1:
                nn.init.xavier_uniform_(p)

    def forward(self, src, trg, src_mask, tgt_mask, src_padding_mask, tgt_padding_mask,
                memory_key_padding_mask):
        src_emb = self.positional_encoding(self.src_embedding(src))
        tgt_emb = self.positional_encoding(self.tgt_embedding(trg))
        outs = self.transformer(src_emb, tgt_emb, src_mask, tgt_mask, None,
                                src_padding_mask, tgt_padding_mask, memory_key_padding_mask)
        return self.ff(outs)

    def encode(self, src, src_mask):
        return self.transformer.encoder(self.positional_encoding(self.src_embedding(src)),
                                        src_mask)

    def decode(self, tgt, memory, tgt_mask):
        return self.transformer.decoder(self.positional_encoding(self.tgt_embedding(tgt)),
                                        memory, tgt_mask)


def generate_square_subsequent_mask(size, device):
    mask = (torch.triu(torch.ones((size, size), device=device)) == 1).transpose(0, 1)
    mask = mask.float().masked_fill(mask == 0, float('-inf')).masked_fill(mask == 1, float(0.0))
    return mask


def create_mask(src, tgt, device):
    src_seq_len = src.shape[0]
    tgt_seq_len = tgt.shape[0]
    tgt_mask = generate_square_subsequent_mask(tgt_seq_len, device)
    src_mask = torch.zeros((src_seq_len, src_seq_len), device=device).type(torch.bool)
    src_padding_mask = (src == PAD_IDX).transpose(0, 1)
    tgt_padding_mask = (tgt == PAD_IDX).transpose(0, 1)
    return src_mask, tgt_mask, src_padding_mask, tgt_padding_mask


def greedy_decode(model, src, src_mask, max_len, start_symbol, device):
    src = src.to(device)
    src_mask = src_mask.to(device)
    memory = model.encode(src, src_mask)
    ys = torch.ones(1, 1).fill_(start_symbol).type(torch.long).to(device)
    for i in range(max_len - 1):
        memory = memory.to(device)
        tgt_mask = (generate_square_subsequent_mask(ys.size(0), device).type(torch.bool)).to(device)
        out = model.decode(ys, memory, tgt_mask)
        out = out.transpose(0, 1)
        prob = model.ff(out[:, -1])
        _, next_word = torch.max(prob, dim=1)
        next_word = next_word.item()
        ys = torch.cat([ys, torch.ones(1, 1).type_as(src.data).fill_(next_word)], dim=0)
        if next_word == EOS_IDX:
            break
    return ys


SRC = ["ein hund läuft", "eine katze schläft im haus", "der mann isst brot",
       "die frau liest ein buch", "ein kind spielt", "der hund schläft im garten"]
TGT = ["a dog runs", "a cat sleeps in the house", "the man eats bread",
       "the woman reads a book", "a child plays", "the dog sleeps in the garden"]


def vocab(sentences):
    words = ['<unk>', '<pad>', '<bos>', '<eos>']
    for s in sentences:
        for w in s.split():
            if w not in words:
                words.append(w)
    return {w: i for i, w in enumerate(words)}


def main(opts):
    torch.manual_seed(opts.seed)
    device = torch.device("cpu")
    src_vocab, tgt_vocab = vocab(SRC), vocab(TGT)
    itos = {i: w for w, i in tgt_vocab.items()}

    def tensor_transform(ids):
        return torch.cat((torch.tensor([BOS_IDX]), torch.tensor(ids), torch.tensor([EOS_IDX])))

    def collate_fn(batch):
        src_batch, tgt_batch = [], []
        for src_sample, tgt_sample in batch:
            src_batch.append(tensor_transform([src_vocab[w] for w in src_sample.split()]))
            tgt_batch.append(tensor_transform([tgt_vocab[w] for w in tgt_sample.split()]))
        return pad_sequence(src_batch, padding_value=PAD_IDX), \
            pad_sequence(tgt_batch, padding_value=PAD_IDX)

    data = list(zip(SRC, TGT))
    train_dl = DataLoader(data, batch_size=opts.batch, collate_fn=collate_fn, shuffle=True)
    model = Translator(opts.enc_layers, opts.dec_layers, opts.embed_size, opts.attn_heads,
                       len(src_vocab), len(tgt_vocab), opts.dim_feedforward,
                       opts.dropout).to(device)
    optim = torch.optim.Adam(model.parameters(), lr=opts.lr, betas=(0.9, 0.98), eps=1e-9)
    loss_fn = torch.nn.CrossEntropyLoss(ignore_index=PAD_IDX, label_smoothing=0.1)
    for epoch in range(1, opts.epochs + 1):
        model.train()
        losses = 0
        for src, tgt in train_dl:
            tgt_input = tgt[:-1, :]
            src_mask, tgt_mask, src_padding_mask, tgt_padding_mask = create_mask(
                src, tgt_input, device)
            logits = model(src, tgt_input, src_mask, tgt_mask, src_padding_mask,
                           tgt_padding_mask, src_padding_mask)
            optim.zero_grad()
            tgt_out = tgt[1:, :]
            loss = loss_fn(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1))
            loss.backward()
            optim.step()
            losses += loss.item()
        print(f"Epoch: {epoch}, Train loss: {losses / len(train_dl):.4f}")
    torch.save(model.state_dict(), "translator.pt")
    model.load_state_dict(torch.load("translator.pt"))
    model.eval()
    for sentence in SRC[:3]:
        src = tensor_transform([src_vocab[w] for w in sentence.split()]).view(-1, 1)
        num_tokens = src.shape[0]
        src_mask = (torch.zeros(num_tokens, num_tokens)).type(torch.bool)
        tgt_tokens = greedy_decode(model, src, src_mask, num_tokens + 5, BOS_IDX,
                                   device).flatten()
        print(sentence, '->', ' '.join(itos[int(i)] for i in tgt_tokens))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="PyTorch Language Translation")
    parser.add_argument("--epochs", default=6, type=int)
    parser.add_argument("--lr", default=1e-3, type=float)
    parser.add_argument("--batch", default=3, type=int)
    parser.add_argument("--attn_heads", default=2, type=int)
    parser.add_argument("--enc_layers", default=2, type=int)
    parser.add_argument("--dec_layers", default=2, type=int)
    parser.add_argument("--embed_size", default=16, type=int)
    parser.add_argument("--dim_feedforward", default=32, type=int)
    parser.add_argument("--dropout", default=0.1, type=float)
    parser.add_argument("--seed", default=0, type=int)
    main(parser.parse_args())
