"""Train with main.py, then sample with generate.py from the saved model (the README's two
commands), in one process so that both see the same ``torch``."""
import argparse
import os
import runpy
import sys

parser = argparse.ArgumentParser()
parser.add_argument('--model', default='LSTM')
parser.add_argument('--tied', action='store_true')
parser.add_argument('--lr', default='20')
args = parser.parse_args()
here = os.path.dirname(os.path.abspath(__file__))
for script, argv in (('main.py', ['--model', args.model, '--lr', args.lr] + (['--tied'] if args.tied else [])),
                     ('generate.py', ['--words', '12', '--temperature', '0.8'])):
    sys.argv = [script, *argv]
    runpy.run_path(os.path.join(here, script), run_name='__main__')
