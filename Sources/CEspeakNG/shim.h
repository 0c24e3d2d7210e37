#ifndef KINESIA_CESPEAKNG_SHIM_H
#define KINESIA_CESPEAKNG_SHIM_H
// Debian's libespeak-ng-dev: the classic speak_lib API (espeak_Synth with a synthesis callback)
// and the espeak_ng_* status codes.
#include <espeak-ng/speak_lib.h>
#include <espeak-ng/espeak_ng.h>
#endif
