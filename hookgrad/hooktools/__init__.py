"""Tools built on hooks: activation capture, a training monitor, a hook trace and graph rendering.

hookgrad extensions (no single PyTorch counterpart); each is built only from PyTorch's public
hook API (module forward hooks, tensor hooks, post-accumulate-grad hooks), so the same patterns
work on real PyTorch models.
"""

from hookgrad.hooktools.capture import capture_activations
from hookgrad.hooktools.graph import render_graph, to_dot
from hookgrad.hooktools.monitor import TrainingMonitor
from hookgrad.hooktools.compiled import CompiledHookNote, note_compiled_hook
from hookgrad.hooktools.silent import REASONS, SilentHook
from hookgrad.hooktools.trace import HookEvent, HookTrace

__all__ = ["capture_activations", "TrainingMonitor", "HookTrace", "HookEvent", "to_dot",
           "render_graph", "SilentHook", "REASONS",
           "CompiledHookNote", "note_compiled_hook"]
