"""nanoGPT's usual session: train, then ``--init_from resume`` for more iterations."""
import argparse
import os
import runpy
import sys

parser = argparse.ArgumentParser()
parser.add_argument('--flash', default='1')
parser.add_argument('--dtype', default='float16')
parser.add_argument('--dropout', default='0.0')
parser.add_argument('--compile', action='store_true')
args = parser.parse_args()
here = os.path.dirname(os.path.abspath(__file__))
common = ['--flash', args.flash, '--dtype', args.dtype, '--dropout', args.dropout] + \
    (['--compile'] if args.compile else [])
for argv in (['--max_iters', '4'], ['--max_iters', '8', '--init_from', 'resume']):
    sys.argv = ['train.py', *argv, *common]
    runpy.run_path(os.path.join(here, 'train.py'), run_name='__main__')
