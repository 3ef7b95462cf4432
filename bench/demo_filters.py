"""See what convolution does: classic filters over an image, computed by this repository's kernels.

Draws a test pattern (or reads your image: a binary PGM/PPM, or a 2-D .npy), runs a box blur, a
Gaussian blur and the two Sobel edge filters over it through the runner (`conv run ID --load-npy
--save-npy`, so every result is also verified against the fp64 reference), and saves a before/after
figure.

    python3 bench/demo_filters.py                      # chapter 02's kernel, into docs/ (on the PTX
                                                       # emulator where no GPU answers: a few seconds)
    python3 bench/demo_filters.py --kernel 01          # chapter 01, on the CPU
    python3 bench/demo_filters.py --image photo.pgm --out /tmp/demo.png

The filters zero-pad the image (pad = half the filter), so the edge filters also answer at the image's
own border, where the picture meets the zeros: that frame is the padding, not the picture.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
FILTERS = {
    "box blur 5x5": np.full((5, 5), 1.0 / 25.0),
    "Gaussian 5x5": np.outer([1, 4, 6, 4, 1], [1, 4, 6, 4, 1]) / 256.0,
    "Sobel x (vertical edges)": np.array([[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]], dtype=float),
    "Sobel y (horizontal edges)": np.array([[-1, -2, -1], [0, 0, 0], [1, 2, 1]], dtype=float),
}


def test_pattern(size=192):
    """Shapes with sharp edges of every orientation, a smooth ramp, and fine stripes."""
    y, x = np.mgrid[0:size, 0:size] / size
    image = 0.25 + 0.5 * x                                                   # a ramp: blurs leave it alone
    image[(x - 0.3) ** 2 + (y - 0.3) ** 2 < 0.04] = 1.0                      # a disc: edges in all directions
    image[(y > 0.6) & (y < 0.9) & (x > 0.1) & (x < 0.45)] = 0.0             # a square: straight edges
    image[(y > 0.55) & (x > 0.6) & (np.floor(x * 40) % 2 == 0)] = 0.9       # stripes: blurring removes them
    return image


def read_image(path):
    if path.endswith(".npy"):
        image = np.load(path).astype(np.float64)
        if image.ndim != 2:
            sys.exit(f"demo: {path}: expected a 2-D array, got shape {image.shape}")
        return image
    with open(path, "rb") as f:
        data = f.read()
    fields, at = [], 0
    while len(fields) < 4:  # magic, width, height, maxval; '#' comments allowed between
        while at < len(data) and data[at:at + 1].isspace():
            at += 1
        if data[at:at + 1] == b"#":
            at = data.index(b"\n", at)
            continue
        end = at
        while end < len(data) and not data[end:end + 1].isspace():
            end += 1
        fields.append(data[at:end])
        at = end
    magic, width, height, maxval = fields[0], int(fields[1]), int(fields[2]), int(fields[3])
    channels = {b"P5": 1, b"P6": 3}.get(magic)
    if channels is None or maxval > 255:
        sys.exit(f"demo: {path}: only binary 8-bit PGM (P5) and PPM (P6) are read")
    pixels = np.frombuffer(data[at + 1:at + 1 + width * height * channels], dtype=np.uint8)
    if pixels.size != width * height * channels:
        sys.exit(f"demo: {path}: file is shorter than its {width}x{height} header says")
    pixels = pixels.reshape(height, width, channels).astype(np.float64) / maxval
    return pixels.mean(axis=2)  # grey


def convolve(conv, kernel_id, image, taps, workdir):
    """One filter over the image through the runner; returns the output and the runner's line."""
    size = taps.shape[0]
    inputs, outputs = os.path.join(workdir, "in"), os.path.join(workdir, "out")
    os.makedirs(inputs, exist_ok=True)
    np.save(os.path.join(inputs, "x.npy"), image[None, None].astype(np.float32))
    np.save(os.path.join(inputs, "w.npy"), taps[None, None].astype(np.float32))
    h, w = image.shape
    command = [conv, "run", kernel_id, "--n", "1", "--c", "1", "--h", str(h), "--w", str(w), "--k", "1",
               "--r", str(size), "--s", str(size), "--pad", str(size // 2), "--reps", "3",
               "--load-npy", inputs, "--save-npy", outputs]
    run = subprocess.run(command, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"demo: {' '.join(command)} failed:\n{run.stdout}{run.stderr}")
    return np.load(os.path.join(outputs, "y.npy"))[0, 0].astype(np.float64), run.stdout.splitlines()[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernel", default="02b", help="kernel id (default 02b; 01 runs on the CPU)")
    parser.add_argument("--image", help="a binary PGM/PPM or a 2-D .npy (default: a drawn test pattern)")
    parser.add_argument("--conv", default=os.path.join(HERE, "..", "build", "conv"))
    parser.add_argument("--out", default=os.path.join(HERE, "..", "docs"),
                        help="a .png file, or a folder for demo_filters_KERNEL.png (default: docs/)")
    args = parser.parse_args()
    if not os.path.exists(args.conv):
        sys.exit(f"demo: no runner at {args.conv} (build first: bash tests/run.sh or bash bench/run.sh)")
    image = read_image(args.image) if args.image else test_pattern()

    results = {}
    with tempfile.TemporaryDirectory() as workdir:
        for name, taps in FILTERS.items():
            results[name], line = convolve(args.conv, args.kernel, image, taps, workdir)
            print(line)

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, 1 + len(results), figsize=(3.0 * (1 + len(results)), 3.4), dpi=100)
    panels = [("input", image)] + list(results.items())
    for axis, (name, picture) in zip(axes, panels):
        edges = name.startswith("Sobel")
        limit = np.abs(picture).max() if edges else None
        shown = axis.imshow(picture, cmap="RdBu_r" if edges else "gray", vmin=-limit if edges else 0,
                            vmax=limit if edges else 1)
        axis.set_title(name, fontsize=10)
        axis.axis("off")
        if edges:  # signed: which way the brightness changes, and how fast
            figure.colorbar(shown, ax=axis, fraction=0.046, pad=0.04)
    figure.suptitle(f"Convolution with kernel {args.kernel} of this repository (verified against the fp64 reference)",
                    fontsize=11)
    figure.text(0.5, 0.01, "The image is zero-padded: the edge filters' frame at the border is where the "
                "picture meets the padding.", ha="center", fontsize=8)
    figure.tight_layout(rect=(0, 0.04, 1, 1))
    if args.out.endswith(".png"):
        path = args.out
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    else:
        os.makedirs(args.out, exist_ok=True)
        path = os.path.join(args.out, f"demo_filters_{args.kernel}.png")
    figure.savefig(path)
    print(f"demo: wrote {path}")


if __name__ == "__main__":
    main()
