#include "CKinesiaEvdev.h"
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

struct ff_effect kinesia_ff_rumble(int16_t id, uint16_t strong_magnitude, uint16_t weak_magnitude,
                                   uint16_t length_ms, uint16_t delay_ms) {
    struct ff_effect effect;
    memset(&effect, 0, sizeof effect);  // padding too: the bytes are the same at every call
    effect.type = FF_RUMBLE;
    effect.id = id;
    effect.direction = 0;
    effect.trigger.button = 0;
    effect.trigger.interval = 0;
    effect.replay.length = length_ms;
    effect.replay.delay = delay_ms;
    effect.u.rumble.strong_magnitude = strong_magnitude;
    effect.u.rumble.weak_magnitude = weak_magnitude;
    return effect;
}

struct input_event kinesia_ff_play_event(uint16_t id, int32_t count) {
    struct input_event event;
    memset(&event, 0, sizeof event);
    event.type = EV_FF;
    event.code = id;
    event.value = count;
    return event;
}

int kinesia_evdev_upload_effect(int fd, struct ff_effect *effect) { return ioctl(fd, EVIOCSFF, effect); }

int kinesia_evdev_erase_effect(int fd, int id) { return ioctl(fd, EVIOCRMFF, id); }

int kinesia_evdev_supports_rumble(int fd) {
    unsigned long bits[(FF_MAX + 8 * sizeof(unsigned long)) / (8 * sizeof(unsigned long))];
    memset(bits, 0, sizeof bits);
    if (ioctl(fd, EVIOCGBIT(EV_FF, sizeof bits), bits) < 0) return -1;
    const size_t per_word = 8 * sizeof(unsigned long);
    return (bits[FF_RUMBLE / per_word] >> (FF_RUMBLE % per_word)) & 1UL ? 1 : 0;
}

ssize_t kinesia_evdev_write_event(int fd, const struct input_event *event) {
    return write(fd, event, sizeof *event);
}

size_t kinesia_ff_effect_size(void) { return sizeof(struct ff_effect); }
size_t kinesia_input_event_size(void) { return sizeof(struct input_event); }
