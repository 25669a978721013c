"""pytorch/examples fast_neural_style: TransformerNet (reflection-padded convolutions,
InstanceNorm2d(affine=True), residual blocks, nearest-neighbour upsampling), a VGG-like loss
network returning a namedtuple of features, Gram matrices with ``bmm``, ``normalize_batch``, and
the training loop with Adam and content + style losses.

The pretrained VGG16 is replaced by a small frozen convolution stack with the same slicing."""
import argparse
from collections import namedtuple

import torch
import torch.nn.functional as F
from torch.optim import Adam
from torch.utils.data import DataLoader


class ConvLayer(torch.nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride):
        super(ConvLayer, self).__init__()
        reflection_padding = kernel_size // 2
        self.reflection_pad = torch.nn.ReflectionPad2d(reflection_padding)
        self.conv2d = torch.nn.Conv2d(in_channels, out_channels, kernel_size, stride)

    def forward(self, x):
        return self.conv2d(self.reflection_pad(x))


class ResidualBlock(torch.nn.Module):
    def __init__(self, channels):
        super(ResidualBlock, self).__init__()
        self.conv1 = ConvLayer(channels, channels, kernel_size=3, stride=1)
        self.in1 = torch.nn.InstanceNorm2d(channels, affine=True)
        self.conv2 = ConvLayer(channels, channels, kernel_size=3, stride=1)
        self.in2 = torch.nn.InstanceNorm2d(channels, affine=True)
        self.relu = torch.nn.ReLU()

    def forward(self, x):
        residual = x
        out = self.relu(self.in1(self.conv1(x)))
        out = self.in2(self.conv2(out))
        return out + residual


class UpsampleConvLayer(torch.nn.Module):
    """Upsample then convolve: fewer checkerboard artifacts than ConvTranspose2d."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, upsample=None):
        super(UpsampleConvLayer, self).__init__()
        self.upsample = upsample
        reflection_padding = kernel_size // 2
        self.reflection_pad = torch.nn.ReflectionPad2d(reflection_padding)
        self.conv2d = torch.nn.Conv2d(in_channels, out_channels, kernel_size, stride)

    def forward(self, x):
        x_in = x
        if self.upsample:
            x_in = torch.nn.functional.interpolate(x_in, mode='nearest',
                                                   scale_factor=self.upsample)
        return self.conv2d(self.reflection_pad(x_in))


class TransformerNet(torch.nn.Module):
    def __init__(self, c=8):
        super(TransformerNet, self).__init__()
        self.conv1 = ConvLayer(3, c, kernel_size=9, stride=1)
        self.in1 = torch.nn.InstanceNorm2d(c, affine=True)
        self.conv2 = ConvLayer(c, 2 * c, kernel_size=3, stride=2)
        self.in2 = torch.nn.InstanceNorm2d(2 * c, affine=True)
        self.res1 = ResidualBlock(2 * c)
        self.res2 = ResidualBlock(2 * c)
        self.deconv1 = UpsampleConvLayer(2 * c, c, kernel_size=3, stride=1, upsample=2)
        self.in4 = torch.nn.InstanceNorm2d(c, affine=True)
        self.deconv3 = ConvLayer(c, 3, kernel_size=9, stride=1)
        self.relu = torch.nn.ReLU()

    def forward(self, X):
        y = self.relu(self.in1(self.conv1(X)))
        y = self.relu(self.in2(self.conv2(y)))
        y = self.res2(self.res1(y))
        y = self.relu(self.in4(self.deconv1(y)))
        return self.deconv3(y)


class Vgg16(torch.nn.Module):
    def __init__(self, requires_grad=False):
        super(Vgg16, self).__init__()
        features = torch.nn.Sequential(
            torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(inplace=True),
            torch.nn.Conv2d(8, 8, 3, padding=1), torch.nn.ReLU(inplace=True),
            torch.nn.MaxPool2d(2, 2),
            torch.nn.Conv2d(8, 12, 3, padding=1), torch.nn.ReLU(inplace=True),
            torch.nn.MaxPool2d(2, 2),
            torch.nn.Conv2d(12, 16, 3, padding=1), torch.nn.ReLU(inplace=True))
        self.slice1 = torch.nn.Sequential()
        self.slice2 = torch.nn.Sequential()
        self.slice3 = torch.nn.Sequential()
        for x in range(4):
            self.slice1.add_module(str(x), features[x])
        for x in range(4, 7):
            self.slice2.add_module(str(x), features[x])
        for x in range(7, 10):
            self.slice3.add_module(str(x), features[x])
        if not requires_grad:
            for param in self.parameters():
                param.requires_grad = False

    def forward(self, X):
        h = self.slice1(X)
        h_relu1_2 = h
        h = self.slice2(h)
        h_relu2_2 = h
        h = self.slice3(h)
        h_relu3_3 = h
        vgg_outputs = namedtuple("VggOutputs", ['relu1_2', 'relu2_2', 'relu3_3'])
        return vgg_outputs(h_relu1_2, h_relu2_2, h_relu3_3)


def gram_matrix(y):
    (b, ch, h, w) = y.size()
    features = y.view(b, ch, w * h)
    features_t = features.transpose(1, 2)
    gram = features.bmm(features_t) / (ch * h * w)
    return gram


def normalize_batch(batch):
    # normalize using imagenet mean and std
    mean = batch.new_tensor([0.485, 0.456, 0.406]).view(-1, 1, 1)
    std = batch.new_tensor([0.229, 0.224, 0.225]).view(-1, 1, 1)
    batch = batch.div_(255.0)
    return (batch - mean) / std


def train(args):
    device = torch.device("cpu")
    torch.manual_seed(args.seed)
    images = torch.rand(8, 3, args.image_size, args.image_size) * 255
    train_loader = DataLoader(torch.utils.data.TensorDataset(images, torch.zeros(8)),
                              batch_size=args.batch_size)
    transformer = TransformerNet().to(device)
    optimizer = Adam(transformer.parameters(), args.lr)
    mse_loss = torch.nn.MSELoss()
    vgg = Vgg16(requires_grad=False).to(device)
    style = torch.rand(3, args.image_size, args.image_size) * 255
    style = style.repeat(args.batch_size, 1, 1, 1).to(device)
    features_style = vgg(normalize_batch(style))
    gram_style = [gram_matrix(y) for y in features_style]

    for e in range(args.epochs):
        transformer.train()
        agg_content_loss = 0.
        agg_style_loss = 0.
        count = 0
        for batch_id, (x, _) in enumerate(train_loader):
            n_batch = len(x)
            count += n_batch
            optimizer.zero_grad()
            x = x.to(device)
            y = transformer(x)
            y = normalize_batch(y)
            x = normalize_batch(x)
            features_y = vgg(y)
            features_x = vgg(x)
            content_loss = args.content_weight * mse_loss(features_y.relu2_2,
                                                          features_x.relu2_2)
            style_loss = 0.
            for ft_y, gm_s in zip(features_y, gram_style):
                gm_y = gram_matrix(ft_y)
                style_loss += mse_loss(gm_y, gm_s[:n_batch, :, :])
            style_loss *= args.style_weight
            total_loss = content_loss + style_loss
            total_loss.backward()
            optimizer.step()
            agg_content_loss += content_loss.item()
            agg_style_loss += style_loss.item()
            mesg = "Epoch {}:\t[{}/{}]\tcontent: {:.6f}\tstyle: {:.6f}\ttotal: {:.6f}".format(
                e + 1, count, len(train_loader.dataset),
                agg_content_loss / (batch_id + 1), agg_style_loss / (batch_id + 1),
                (agg_content_loss + agg_style_loss) / (batch_id + 1))
            print(mesg)
    transformer.eval().cpu()
    torch.save(transformer.state_dict(), args.save_model_path)
    print("\nDone, trained model saved at", args.save_model_path)


def stylize(args):
    content_image = torch.rand(1, 3, args.image_size, args.image_size).mul(255)
    with torch.no_grad():
        style_model = TransformerNet()
        state_dict = torch.load(args.save_model_path)
        # remove saved deprecated running_* keys in InstanceNorm from the checkpoint
        for k in list(state_dict.keys()):
            if k.endswith(('running_mean', 'running_var')):
                del state_dict[k]
        style_model.load_state_dict(state_dict)
        output = style_model(content_image).cpu()
    img = output[0].clone().clamp(0, 255).numpy()
    img = img.transpose(1, 2, 0).astype("uint8")
    print('stylized', img.shape, int(img.sum()))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="parser for fast-neural-style")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--image-size", type=int, default=16)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--content-weight", type=float, default=1e5)
    parser.add_argument("--style-weight", type=float, default=1e10)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--save-model-path", type=str, default="style.model")
    args = parser.parse_args()
    train(args)
    stylize(args)
