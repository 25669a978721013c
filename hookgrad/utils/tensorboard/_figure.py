"""Matplotlib figures as CHW uint8 arrays (``add_figure``); Matplotlib is imported on use."""

from __future__ import annotations

from typing import Any

import numpy as np


def figure_to_image(figures: Any, close: bool = True) -> np.ndarray:
    """RGB pixels of one figure (``3 x H x W``) or a list of them (``N x 3 x H x W``).

    Mirrors: ``torch.utils.tensorboard._utils.figure_to_image``.
    """
    import matplotlib.pyplot as plt
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    def render(figure: Any) -> np.ndarray:
        canvas = FigureCanvasAgg(figure)
        canvas.draw()
        width, height = figure.canvas.get_width_height()
        rgba = np.frombuffer(canvas.buffer_rgba(), dtype=np.uint8).reshape([height, width, 4])
        if close:
            plt.close(figure)
        return np.moveaxis(rgba[:, :, :3], 2, 0)

    if isinstance(figures, list):
        return np.stack([render(f) for f in figures])
    return render(figures)
