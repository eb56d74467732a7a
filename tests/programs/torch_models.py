"""Speech, vision-transformer and audio workloads beyond the LLM: transformers
Whisper (tiny configuration, random weights from a fixed seed) generating
from a fixed log-mel input, a ViT and a CLIP vision encoder forward, and
torchaudio's MelSpectrogram (cuFFT). Prints one line per check, "NAME ok
<checksum>" (generated token ids are printed in full) or "NAME error
<exception>", then "done", so that a local run and a run through Gleam compare
line by line (deploy/gpu-check.sh). No downloads: every model is built from
its configuration. Timings go to stderr.

Usage: torch_models.py [NAME ...] (default: all)."""
import sys
import time

import torch

from torch_ops import run


def fixed(*shape, seed=0):
    g = torch.Generator(device="cpu")
    g.manual_seed(seed)
    return torch.randn(*shape, generator=g)


def check_whisper_generate():
    import transformers
    torch.manual_seed(0)
    cfg = transformers.WhisperConfig(
        vocab_size=51865, num_mel_bins=80, d_model=384, encoder_layers=4, decoder_layers=4,
        encoder_attention_heads=6, decoder_attention_heads=6, encoder_ffn_dim=1536,
        decoder_ffn_dim=1536, max_source_positions=1500, max_target_positions=448,
        decoder_start_token_id=50258, eos_token_id=50257, pad_token_id=50257,
        bos_token_id=50257)
    model = transformers.WhisperForConditionalGeneration(cfg).cuda().eval()
    gen = transformers.GenerationConfig(decoder_start_token_id=50258, eos_token_id=50257,
                                        pad_token_id=50257, max_new_tokens=24, do_sample=False)
    model.generation_config = gen
    features = fixed(1, 80, 3000).cuda()
    t0 = time.time()
    with torch.no_grad():
        ids = model.generate(features, generation_config=gen)
    torch.cuda.synchronize()
    n = ids.shape[-1]
    print("timing whisper_tiny: %.1f tokens/s (%d tokens)" % (n / (time.time() - t0), n),
          file=sys.stderr)
    print("whisper_generate ids", " ".join(str(int(t)) for t in ids[0]), flush=True)
    return ids


def check_vit_forward():
    import transformers
    torch.manual_seed(0)
    cfg = transformers.ViTConfig(hidden_size=192, num_hidden_layers=4, num_attention_heads=3,
                                 intermediate_size=768, image_size=224, patch_size=16)
    model = transformers.ViTModel(cfg).cuda().eval()
    with torch.no_grad():
        return model(pixel_values=fixed(2, 3, 224, 224).cuda()).last_hidden_state


def check_clip_vision():
    import transformers
    torch.manual_seed(0)
    cfg = transformers.CLIPVisionConfig(hidden_size=256, intermediate_size=1024,
                                        num_hidden_layers=4, num_attention_heads=4,
                                        image_size=224, patch_size=32)
    model = transformers.CLIPVisionModel(cfg).cuda().eval()
    with torch.no_grad():
        out = model(pixel_values=fixed(2, 3, 224, 224, seed=1).cuda())
    return [out.last_hidden_state, out.pooler_output]


def check_mel_spectrogram():
    import torchaudio
    mel = torchaudio.transforms.MelSpectrogram(sample_rate=16000, n_fft=400, hop_length=160,
                                               n_mels=80).cuda()
    return mel(fixed(2, 16000 * 3, seed=2).cuda())


CHECKS = [(n[len("check_"):], f) for n, f in sorted(globals().items()) if n.startswith("check_")]

if __name__ == "__main__":
    print("cuda", torch.cuda.is_available(), flush=True)
    run(CHECKS, set(sys.argv[1:]), width=200)
