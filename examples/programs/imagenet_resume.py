"""Run imagenet.py for one epoch, then again with ``--resume checkpoint.pth.tar`` for a second
(the checkpoint holds model, optimizer and scheduler state)."""
import os
import runpy
import sys

here = os.path.dirname(os.path.abspath(__file__))
for argv in (['--epochs', '1'], ['--epochs', '2', '--resume', 'checkpoint.pth.tar'],
             ['--evaluate', '--resume', 'checkpoint.pth.tar'], ['--evaluate', '--resume', 'model_best.pth.tar']):
    sys.argv = ['imagenet.py', *argv]
    runpy.run_path(os.path.join(here, 'imagenet.py'), run_name='__main__')
