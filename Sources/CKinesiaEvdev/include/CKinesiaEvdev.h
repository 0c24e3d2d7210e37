#ifndef KINESIA_CKINESIAEVDEV_H
#define KINESIA_CKINESIAEVDEV_H
// Linux force feedback through evdev, as C functions Swift can call: the ioctl numbers
// (EVIOCSFF, EVIOCRMFF, EVIOCGBIT) are function-like macros Swift cannot import.
#include <linux/input.h>
#include <stdint.h>
#include <sys/types.h>

/// A rumble effect (FF_RUMBLE): `id` -1 asks the kernel for a new effect slot; lengths in ms.
struct ff_effect kinesia_ff_rumble(int16_t id, uint16_t strong_magnitude, uint16_t weak_magnitude,
                                   uint16_t length_ms, uint16_t delay_ms);

/// The event that plays effect `id` `count` times (0 stops it): type EV_FF, code id, time zero.
struct input_event kinesia_ff_play_event(uint16_t id, int32_t count);

/// ioctl(fd, EVIOCSFF, effect): uploads (or updates) an effect; the kernel writes its id into
/// effect->id. Returns 0, or -1 with errno set.
int kinesia_evdev_upload_effect(int fd, struct ff_effect *effect);

/// ioctl(fd, EVIOCRMFF, id): erases an uploaded effect. Returns 0, or -1 with errno set.
int kinesia_evdev_erase_effect(int fd, int id);

/// Whether the device can rumble (EVIOCGBIT(EV_FF) has FF_RUMBLE): 1, 0, or -1 with errno set
/// (ENOTTY: not an input device).
int kinesia_evdev_supports_rumble(int fd);

/// write(2) of one input_event. Returns the bytes written, or -1 with errno set.
ssize_t kinesia_evdev_write_event(int fd, const struct input_event *event);

/// sizeof(struct ff_effect) and sizeof(struct input_event) on this platform.
size_t kinesia_ff_effect_size(void);
size_t kinesia_input_event_size(void);

#endif
