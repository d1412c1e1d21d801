#!/bin/bash
# Prints the shipped layer files (platforms/nets/) again, run from the repository root:
# the four CNNs from torchvision (needs Debian python3-torch and python3-torchvision),
# the seven transformers from their configurations (no PyTorch).
set -e
T=experiments/nets/torch_layers.py
DEB="PyTorch: Debian python3-torch 1.13.1+dfsg-4 and python3-torchvision 0.14.1-2 (they report 1.13.0a0, 0.14.1a0)."
IMNET1="samples: ImageNet-1k (ILSVRC 2012), 1 281 167 training and 50 000 validation images:"
IMNET2="  O. Russakovsky et al., \"ImageNet Large Scale Visual Recognition Challenge\", IJCV 115(3), 2015."

/usr/bin/python3 $T resnet50 3x224x224 --name ResNet-50 --samples 1281167 50000 \
  --source "ResNet-50, torchvision's model (V1.5), from its layers." \
  --source "Tensor shapes: torchvision 0.14.1, torchvision/models/resnet.py, resnet50(weights=None):" \
  --source "  Bottleneck blocks [3, 4, 6, 3], 25 557 032 parameters." \
  --source "$DEB" \
  --source "Net: K. He, X. Zhang, S. Ren, J. Sun, \"Deep Residual Learning for Image Recognition\"," \
  --source "  CVPR 2016, Table 1: 50-layer, 3.8e9 FLOPs, which the paper counts as multiply-adds." \
  --source "Ours: 8 224 732 136 forward flops per sample (2 per multiply-add), 4.11e9 multiply-adds;" \
  --source "  conv and linear alone 4 089 184 256 multiply-adds (+7.6% on 3.8e9), batch norm" \
  --source "  44 455 936 flops, pooling 1 906 688. The gap: torchvision's ResNet puts a stage's stride 2" \
  --source "  on the first block's 3x3 conv, the paper on its first 1x1 conv; with the paper's placement" \
  --source "  conv and linear come to 3 857 973 248 multiply-adds, the paper's 3.8e9 rounded." \
  --source "$IMNET1" --source "$IMNET2" \
  --source "inputs: one 3x224x224 image; outputs: 1000 class scores." \
  > platforms/nets/resnet50.layers

/usr/bin/python3 $T resnet101 3x224x224 --name ResNet-101 --samples 1281167 50000 \
  --source "ResNet-101, torchvision's model (V1.5), from its layers." \
  --source "Tensor shapes: torchvision 0.14.1, torchvision/models/resnet.py, resnet101(weights=None):" \
  --source "  Bottleneck blocks [3, 4, 23, 3], 44 549 160 parameters." \
  --source "$DEB" \
  --source "Net: K. He, X. Zhang, S. Ren, J. Sun, \"Deep Residual Learning for Image Recognition\"," \
  --source "  CVPR 2016, Table 1: 101-layer, 7.6e9 FLOPs, which the paper counts as multiply-adds." \
  --source "Ours: 15 669 646 312 forward flops per sample (2 per multiply-add), 7.83e9 multiply-adds;" \
  --source "  conv and linear alone 7 801 405 440 multiply-adds (+2.6% on 7.6e9), batch norm" \
  --source "  64 927 744 flops, pooling 1 906 688. The gap: torchvision's ResNet puts a stage's stride 2" \
  --source "  on the first block's 3x3 conv, the paper on its first 1x1 conv; with the paper's placement" \
  --source "  conv and linear come to 7 570 194 432 multiply-adds, the paper's 7.6e9 rounded." \
  --source "$IMNET1" --source "$IMNET2" \
  --source "inputs: one 3x224x224 image; outputs: 1000 class scores." \
  > platforms/nets/resnet101.layers

/usr/bin/python3 $T vgg16 3x224x224 --name VGG-16 --samples 1281167 50000 \
  --source "VGG-16 (configuration D, without batch norm), torchvision's model, from its layers." \
  --source "Tensor shapes: torchvision 0.14.1, torchvision/models/vgg.py, vgg16(weights=None): config" \
  --source "  \"D\", AdaptiveAvgPool2d to 7x7, classifier 25088-4096-4096-1000, 138 357 544 parameters." \
  --source "$DEB" \
  --source "Net: K. Simonyan, A. Zisserman, \"Very Deep Convolutional Networks for Large-Scale Image" \
  --source "  Recognition\", ICLR 2015; its Table 2 gives 138 million parameters for D and no flop count." \
  --source "  The commonly quoted 15.5 G multiply-adds is not in the paper's tables; He et al. 2016" \
  --source "  (\"Deep Residual Learning\", Sec. 4.1) give VGG-16 15.3 billion FLOPs (multiply-adds)." \
  --source "Ours: 30 960 231 912 forward flops per sample (2 per multiply-add), 15.48e9 multiply-adds;" \
  --source "  conv 15 346 630 656 multiply-adds (He et al.'s 15.3e9), linear 123 633 664 (with them" \
  --source "  15 470 264 320, the quoted 15.5e9), bias additions 13 556 712 flops, pooling 6 146 560." \
  --source "$IMNET1" --source "$IMNET2" \
  --source "inputs: one 3x224x224 image; outputs: 1000 class scores." \
  > platforms/nets/vgg16.layers

/usr/bin/python3 $T inception_v3 3x299x299 --train --name "Inception V3" --samples 1281167 50000 \
  --source "Inception V3 with its auxiliary classifier, torchvision's model, from its layers." \
  --source "Tensor shapes: torchvision 0.14.1, torchvision/models/inception.py, inception_v3(weights=None)" \
  --source "  (aux_logits=True, init_weights as is): 27 161 264 parameters, 3 326 696 of them AuxLogits." \
  --source "$DEB" \
  --source "The AuxLogits head runs only in training mode but its parameters are trained, so the pass" \
  --source "  runs in training mode with batch 2 (the head's batch norm on a 1x1 map needs more than one" \
  --source "  value per channel), under no_grad; flops are per sample. The head is listed where it runs," \
  --source "  after Mixed_6e. (In eval mode it is skipped: 23 834 568 parameters.)" \
  --source "Net: C. Szegedy, V. Vanhoucke, S. Ioffe, J. Shlens, Z. Wojna, \"Rethinking the Inception" \
  --source "  Architecture for Computer Vision\", CVPR 2016, abstract: a computational cost of 5 billion" \
  --source "  multiply-adds per inference and less than 25 million parameters (inference: no aux head)." \
  --source "Ours: 11 479 003 792 forward flops per sample (2 per multiply-add), 5.74e9 multiply-adds;" \
  --source "  conv and linear alone 5 718 899 296 multiply-adds, 5 683 200 of them the aux head" \
  --source "  (without it 5.713e9, +14% on the paper's round 5e9: the paper gives no per-layer count," \
  --source "  so that gap is not accounted for here), batch norm 35 885 824 flops, pooling 5 317 376" \
  --source "  (pooling modules only: the Inception blocks' pooling is functional, not counted)." \
  --source "$IMNET1" --source "$IMNET2" \
  --source "inputs: one 3x299x299 image; outputs: 1000 class scores (the main head's)." \
  > platforms/nets/inception_v3.layers

/usr/bin/python3 experiments/nets/transformer_layers.py bert-large > platforms/nets/bert_large.layers
/usr/bin/python3 experiments/nets/transformer_layers.py gpt2 > platforms/nets/gpt2.layers
for m in llama2-7b llama2-13b llama2-70b gpt3-175b t5-11b; do
  /usr/bin/python3 experiments/nets/transformer_layers.py $m > platforms/nets/${m//-/_}.layers
done
