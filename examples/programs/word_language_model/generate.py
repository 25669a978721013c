"""pytorch/examples word_language_model/generate.py: load a saved language model and sample
words with ``torch.multinomial`` at a temperature (run main.py first)."""
import argparse

import torch

import data

parser = argparse.ArgumentParser(description='PyTorch Wikitext-2 Language Model')
parser.add_argument('--data', type=str, default='./data/toy')
parser.add_argument('--checkpoint', type=str, default='./model.pt')
parser.add_argument('--outf', type=str, default='generated.txt')
parser.add_argument('--words', type=int, default=30)
parser.add_argument('--seed', type=int, default=1111)
parser.add_argument('--temperature', type=float, default=1.0)
parser.add_argument('--log-interval', type=int, default=10)
args = parser.parse_args()

torch.manual_seed(args.seed)
device = torch.device("cpu")
if args.temperature < 1e-3:
    parser.error("--temperature has to be greater or equal 1e-3.")

with open(args.checkpoint, 'rb') as f:
    model = torch.load(f, map_location=device, weights_only=False)
model.eval()

corpus = data.Corpus(args.data)
ntokens = len(corpus.dictionary)

is_transformer_model = hasattr(model, 'model_type') and model.model_type == 'Transformer'
if not is_transformer_model:
    hidden = model.init_hidden(1)
input = torch.randint(ntokens, (1, 1), dtype=torch.long).to(device)

with open(args.outf, 'w') as outf:
    with torch.no_grad():  # no tracking history
        for i in range(args.words):
            if is_transformer_model:
                output = model(input, False)
                word_weights = output[-1].squeeze().div(args.temperature).exp().cpu()
                word_idx = torch.multinomial(word_weights, 1)[0]
                word_tensor = torch.Tensor([[word_idx]]).long().to(device)
                input = torch.cat([input, word_tensor], 0)
            else:
                output, hidden = model(input, hidden)
                word_weights = output.squeeze().div(args.temperature).exp().cpu()
                word_idx = torch.multinomial(word_weights, 1)[0]
                input.fill_(word_idx)
            word = corpus.dictionary.idx2word[word_idx]
            outf.write(word + ('\n' if i % 20 == 19 else ' '))
            if i % args.log_interval == 0:
                print('| Generated {}/{} words'.format(i, args.words))
print(open(args.outf).read())
