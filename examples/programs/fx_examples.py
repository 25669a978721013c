"""pytorch/examples fx: symbolic tracing and graph rewriting — ``replace_op.py`` (turn every
``torch.add`` / ``operator.add`` into ``torch.mul``), ``subgraph_rewriter_basic_use.py``
(``torch.fx.replace_pattern``), ``primitive_library.py``-style leaf modules in a custom
``Tracer``, and ``fuse`` of Conv2d + BatchNorm2d for inference."""
import copy
import operator

import torch
import torch.fx
import torch.nn as nn
from torch.fx import replace_pattern, symbolic_trace

torch.manual_seed(0)


# --- replace_op.py ------------------------------------------------------------------------------
class M(torch.nn.Module):
    def forward(self, x, y):
        return x + y, torch.add(x, y), x.add(y)


traced = symbolic_trace(M())
patterns = set([operator.add, torch.add, "add"])
for n in traced.graph.nodes:
    if any(n.target == pattern for pattern in patterns):
        with traced.graph.inserting_after(n):
            new_node = traced.graph.call_function(torch.mul, n.args, n.kwargs)
            n.replace_all_uses_with(new_node)
        traced.graph.erase_node(n)
traced.recompile()
x, y = torch.randn(3), torch.randn(3)
print('replace_op', [t.tolist() == (x * y).tolist() for t in traced(x, y)])
print(sorted(str(n.op) + ':' + str(getattr(n.target, '__name__', n.target))
             for n in traced.graph.nodes))


# --- subgraph_rewriter_basic_use.py -------------------------------------------------------------
class N(torch.nn.Module):
    def forward(self, x, w1, w2):
        m1 = torch.cat([w1, w2]).sum()
        m2 = torch.cat([w1, w2]).sum()
        return x + torch.max(m1) + torch.max(m2)


def pattern(w1, w2):
    return torch.cat([w1, w2]).sum()


def replacement(w1, w2):
    return torch.stack([w1, w2])


traced_module = symbolic_trace(N())
matches = replace_pattern(traced_module, pattern, replacement)
print('replace_pattern matches', len(matches))
a, b, c = torch.randn(2), torch.randn(2), torch.randn(2)
print('rewritten', [round(v, 5) for v in traced_module(a, b, c).flatten().tolist()])


# --- a custom tracer keeping a module as a leaf -------------------------------------------------
class MySigmoid(nn.Module):
    def forward(self, x):
        return 1 / (1 + torch.exp(-x))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 3)
        self.act = MySigmoid()

    def forward(self, x):
        return self.act(self.lin(x)).relu().sum(dim=-1)


class LeafTracer(torch.fx.Tracer):
    def is_leaf_module(self, m, qualname):
        return isinstance(m, MySigmoid) or super().is_leaf_module(m, qualname)


net = Net()
graph = LeafTracer().trace(net)
gm = torch.fx.GraphModule(net, graph)
print('leaf nodes', [(n.op, str(n.target)) for n in gm.graph.nodes])
inp = torch.randn(2, 4)
print('same result', torch.allclose(gm(inp), net(inp)))


# --- conv/bn fusion (fx/fuse.py / torch.fx.experimental.optimization.fuse) -----------------------
def fuse_conv_bn_eval(conv, bn):
    fused_conv = copy.deepcopy(conv)
    w, b = fused_conv.weight, fused_conv.bias
    if b is None:
        b = torch.zeros_like(bn.running_mean)
    scale = bn.weight * torch.rsqrt(bn.running_var + bn.eps)
    fused_conv.weight = torch.nn.Parameter(w * scale.reshape(-1, 1, 1, 1))
    fused_conv.bias = torch.nn.Parameter((b - bn.running_mean) * scale + bn.bias)
    return fused_conv


def fuse(model: torch.nn.Module) -> torch.nn.Module:
    model = copy.deepcopy(model)
    fx_model: torch.fx.GraphModule = torch.fx.symbolic_trace(model)
    modules = dict(fx_model.named_modules())
    for node in fx_model.graph.nodes:
        if node.op != 'call_module':
            continue
        if type(modules[node.target]) is nn.BatchNorm2d and \
                type(modules[node.args[0].target]) is nn.Conv2d:
            if len(node.args[0].users) > 1:
                continue
            conv = modules[node.args[0].target]
            bn = modules[node.target]
            fused_conv = fuse_conv_bn_eval(conv, bn)
            parent_name, name = node.args[0].target.rsplit('.', 1) if '.' in node.args[0].target \
                else ('', node.args[0].target)
            setattr(modules[parent_name] if parent_name else fx_model, name, fused_conv)
            node.replace_all_uses_with(node.args[0])
            fx_model.graph.erase_node(node)
    fx_model.graph.lint()
    fx_model.recompile()
    return fx_model


class ConvBN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.bn = nn.BatchNorm2d(4)

    def forward(self, x):
        return self.bn(self.conv(x)).relu()


model = ConvBN()
model.train()
model(torch.randn(4, 3, 8, 8))  # fill running statistics
model.eval()
fused = fuse(model)
inp = torch.randn(2, 3, 8, 8)
print('fused modules', [n.target for n in fused.graph.nodes if n.op == 'call_module'])
print('fusion error < 1e-5', (fused(inp) - model(inp)).abs().max().item() < 1e-5)
