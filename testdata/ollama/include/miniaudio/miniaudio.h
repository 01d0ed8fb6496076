/*
 * A stand-in for miniaudio.h, used only to build the ollama server for
 * engram's tests (scripts/ollama.sh build).
 *
 * Ollama's module zip drops llama.cpp's vendor/ folder, so the real header is
 * missing and no Debian package ships it. llama.cpp uses miniaudio only to
 * decode audio input for multimodal models (tools/mtmd/mtmd-helper.cpp). This
 * stub declares the few ma_decoder* calls made there and makes every one of
 * them fail, which disables audio input and nothing else.
 */
#ifndef ENGRAM_MINIAUDIO_STUB_H
#define ENGRAM_MINIAUDIO_STUB_H

#include <stddef.h>

typedef unsigned long long ma_uint64;
typedef unsigned int ma_uint32;

typedef enum {
    MA_SUCCESS = 0,
    MA_ERROR = -1,
    MA_NOT_IMPLEMENTED = -29
} ma_result;

typedef enum {
    ma_format_unknown = 0,
    ma_format_u8 = 1,
    ma_format_s16 = 2,
    ma_format_s24 = 3,
    ma_format_s32 = 4,
    ma_format_f32 = 5
} ma_format;

typedef struct {
    ma_format format;
    ma_uint32 channels;
    ma_uint32 sampleRate;
} ma_decoder_config;

typedef struct {
    int unused;
} ma_decoder;

static inline ma_decoder_config ma_decoder_config_init(ma_format format, ma_uint32 channels, ma_uint32 sampleRate) {
    ma_decoder_config c;
    c.format = format;
    c.channels = channels;
    c.sampleRate = sampleRate;
    return c;
}

static inline ma_result ma_decoder_init_memory(const void *data, size_t size, const ma_decoder_config *config, ma_decoder *decoder) {
    (void)data; (void)size; (void)config; (void)decoder;
    return MA_NOT_IMPLEMENTED;
}

static inline ma_result ma_decoder_get_length_in_pcm_frames(ma_decoder *decoder, ma_uint64 *length) {
    (void)decoder;
    if (length) *length = 0;
    return MA_NOT_IMPLEMENTED;
}

static inline ma_result ma_decoder_read_pcm_frames(ma_decoder *decoder, void *frames, ma_uint64 count, ma_uint64 *read) {
    (void)decoder; (void)frames; (void)count;
    if (read) *read = 0;
    return MA_NOT_IMPLEMENTED;
}

static inline ma_result ma_decoder_uninit(ma_decoder *decoder) {
    (void)decoder;
    return MA_SUCCESS;
}

#endif /* ENGRAM_MINIAUDIO_STUB_H */
