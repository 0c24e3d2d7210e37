// The floor of the end-to-end benchmark: the topology of `kinesia ingest -> broker -> kinesia
// worker -> broker -> consumer`, built from bare libzmq calls, moving records of the same sizes.
// scripts/bench_e2e.py compiles and runs it next to the real processes:
//
//   gcc -O2 -o /tmp/bench_e2e_floor scripts/bench_e2e_floor.c -lzmq
//   /tmp/bench_e2e_floor --cameras 8 --publishers 8 --workers 2 --sessions 2 --fps 60
//       --seconds 10 --warmup 2 --pose-bytes 549 --answer-bytes 327
//
// Processes (fork, one libzmq context each, IPC endpoints in a fresh directory):
//   broker      XSUB (bind pub.sock) <-> XPUB (bind sub.sock), zmq_proxy, high-water marks 10000
//               (as `kinesia broker`);
//   publishers  `--publishers` processes sharing the cameras; each camera sends a pose-sized record
//               on "pose/camK/" every 1/fps seconds; the record's header has the sequence number
//               and the send time (CLOCK_REALTIME) at the offsets of the Kinesia wire header; an
//               XPUB waits until its cameras are subscribed (as `kinesia ingest`);
//   workers     `--workers` processes sharing the cameras (camera k -> worker k % workers); for each
//               pose, one record of `--answer-bytes` per session on "snap/camK/sS/", carrying the
//               pose's send time (the relay a worker does, without the analysis; with
//               `--analyze 1`, the analysis too: below);
//   consumer    this process: subscribes to "pose/" (as the Swift probe does, so that the broker
//               fans out the same traffic) and "snap/"; latency = receipt - the pose's send time.
//
// `--pose-template FILE --publishers-only 1 --bus DIR` only publishes: real pose records (the
// template's bytes, with sequence, send time and timestamp patched) into a running Kinesia bus,
// so that the C publishers can stand in for `kinesia ingest` in front of a real worker.
//
// `--pose-records FILE` (repeatable) publishes real poses: each file holds pose records as
// `kinesia ingest` publishes them (wire format section 4), each after its length (UInt32,
// little-endian); camera k sends file k % count's records in turn, looped, with sequence, send
// time and timestamp patched. `--analyze 1` (with them) makes the workers do the work of
// `kinesia worker`'s sessions: decode each pose with the wire format's checks, analyse it for
// every session (shoulder abduction, left and right: see analyze_pose) and answer with a
// snapshot JSON of the keys a worker writes (header, the pose's send time, the JSON), so that
// the floor is equal work for the pipeline and not a relay of records it never reads.
//
// `--journal DIR` makes the floor do the durable work `kinesia ingest` and `kinesia worker` do
// as deployed, so that it is equal work for the journaled pipeline: each publisher writes every
// pose's record (length, CRC-32C, sequence, the two frames: Kinesia's journal record layout) to
// its camera's file with one pwrite before sending it, and fdatasyncs each file every 200 ms
// (`kinesia ingest`'s default); each worker gathers its answers' records per session in memory,
// and a thread of its own pwrites each session's batch every 20 ms and fdatasyncs every file
// every second (`kinesia worker`'s write-behind queue and sync). No simulation, replay server or
// health report: those are not the bus's work.
//
// `--bus DIR` uses a running broker (e.g. `kinesia broker --bus DIR`) instead of forking one:
// it tells the broker's share of a difference.
//
// Loss: every pose the consumer saw with a send time in the measured window must come back once
// per session; answers missing are lost (counted like the Swift probe does).
//
// Prints one JSON object: {"impl":"c","bench":"e2e-floor",...,"median_us":..,"p99_us":..,...}
#define _GNU_SOURCE
#include <zmq.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int cameras = 1, publishers = 1, workers = 1, sessions = 2;
static double fps = 60, seconds = 10, warmup = 2;
static int pose_bytes = 549, answer_bytes = 327;
static char dir[256], pub_endpoint[300], sub_endpoint[300];
static const char *external_bus = NULL;
static unsigned char *pose_template = NULL;
// `--pose-records FILE` (repeatable): real pose records, camera k cycling through file k % count.
struct recording { unsigned char **records; uint32_t *lengths; int count; double duration; };  // duration: a loop's
static struct recording recordings[64];
static int recording_count = 0;
static int analyze = 0;
static int publishers_only = 0;
static const char *journal_dir = NULL;
static volatile sig_atomic_t stopping = 0;

static void on_term(int sig) { (void)sig; stopping = 1; }

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void check(int rc, const char *what) {
    if (rc < 0 && !stopping) {
        fprintf(stderr, "floor: %s: %s\n", what, zmq_strerror(zmq_errno()));
        exit(1);
    }
}

static void set_int(void *s, int option, int value) {
    check(zmq_setsockopt(s, option, &value, sizeof value), "setsockopt");
}

static void broker(void) {
    void *ctx = zmq_ctx_new();
    void *xsub = zmq_socket(ctx, ZMQ_XSUB), *xpub = zmq_socket(ctx, ZMQ_XPUB);
    set_int(xsub, ZMQ_RCVHWM, 10000);
    set_int(xsub, ZMQ_SNDHWM, 10000);
    set_int(xpub, ZMQ_SNDHWM, 10000);
    set_int(xpub, ZMQ_RCVHWM, 10000);
    set_int(xsub, ZMQ_LINGER, 0);
    set_int(xpub, ZMQ_LINGER, 0);
    check(zmq_bind(xsub, pub_endpoint), "bind frontend");
    check(zmq_bind(xpub, sub_endpoint), "bind backend");
    zmq_proxy(xsub, xpub, NULL);  // returns when the process is terminated
    _exit(0);
}

static void put_u64(unsigned char *p, uint64_t v) { memcpy(p, &v, 8); }
static uint64_t get_u64(const unsigned char *p) { uint64_t v; memcpy(&v, p, 8); return v; }


// The journal of `--journal`: Kinesia's record layout, CRC-32C (Castagnoli) as Kinesia's CRC32C
// computes it: by SSE 4.2's crc32 instruction where the processor has it, else sliced by 8.
static uint32_t crc_table[8][256];
static int crc_instruction;

static void crc_init(void) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        crc_table[0][i] = c;
    }
    for (int t = 1; t < 8; t++)
        for (int i = 0; i < 256; i++)
            crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^ crc_table[0][crc_table[t - 1][i] & 0xFF];
#if defined(__x86_64__)
    __builtin_cpu_init();
    crc_instruction = __builtin_cpu_supports("sse4.2");
#endif
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) static uint32_t crc_update_instruction(uint32_t crc, const unsigned char *p,
                                                                         size_t n) {
    uint64_t c = crc;
    while (n >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        c = __builtin_ia32_crc32di(c, word);
        p += 8;
        n -= 8;
    }
    crc = (uint32_t)c;
    while (n--) crc = __builtin_ia32_crc32qi(crc, *p++);
    return crc;
}
#endif

static uint32_t crc_update(uint32_t crc, const unsigned char *p, size_t n) {
#if defined(__x86_64__)
    if (crc_instruction) return crc_update_instruction(crc, p, n);
#endif
    while (n >= 8) {
        uint32_t low, high;
        memcpy(&low, p, 4);
        memcpy(&high, p + 4, 4);
        low ^= crc;
        crc = crc_table[7][low & 0xFF] ^ crc_table[6][(low >> 8) & 0xFF] ^ crc_table[5][(low >> 16) & 0xFF]
              ^ crc_table[4][low >> 24] ^ crc_table[3][high & 0xFF] ^ crc_table[2][(high >> 8) & 0xFF]
              ^ crc_table[1][(high >> 16) & 0xFF] ^ crc_table[0][high >> 24];
        p += 8;
        n -= 8;
    }
    while (n--) crc = crc_table[0][(crc ^ *p++) & 0xFF] ^ (crc >> 8);
    return crc;
}

// Appends the record of `sequence` with frames `topic` and `payload` at `out`; returns its size.
static size_t journal_record(unsigned char *out, uint64_t sequence, const void *topic, uint32_t topic_length,
                             const void *payload, uint32_t payload_length) {
    uint32_t body = 8 + 4 + 4 + topic_length + 4 + payload_length, frames = 2;
    unsigned char *p = out + 8;
    memcpy(p, &sequence, 8); p += 8;
    memcpy(p, &frames, 4); p += 4;
    memcpy(p, &topic_length, 4); p += 4;
    memcpy(p, topic, topic_length); p += topic_length;
    memcpy(p, &payload_length, 4); p += 4;
    memcpy(p, payload, payload_length);
    memcpy(out, &body, 4);
    uint32_t crc = ~crc_update(crc_update(~0u, out, 4), out + 8, body);
    memcpy(out + 4, &crc, 4);
    return 8 + body;
}

static int journal_open(const char *name) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", journal_dir, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) { perror(path); _exit(1); }
    return fd;
}

// A worker's write-behind: records gathered per session under a lock, written by a thread.
struct journal_stream { int fd; off_t end; unsigned char *pending; size_t used, capacity; int unsynced; };
static struct journal_stream *streams;
static int stream_count;
static pthread_mutex_t streams_lock = PTHREAD_MUTEX_INITIALIZER;

static void *journal_thread(void *unused) {
    (void)unused;
    unsigned char *batch = NULL;
    size_t batch_capacity = 0;
    uint64_t last_sync = now_ns();
    while (!stopping) {
        struct timespec ts = {0, 20000000};
        nanosleep(&ts, NULL);
        for (int i = 0; i < stream_count; i++) {
            struct journal_stream *s = &streams[i];
            pthread_mutex_lock(&streams_lock);
            size_t used = s->used;
            if (used > batch_capacity) { batch_capacity = used * 2; batch = realloc(batch, batch_capacity); }
            if (used) memcpy(batch, s->pending, used);
            s->used = 0;
            pthread_mutex_unlock(&streams_lock);
            if (!used) continue;
            if (pwrite(s->fd, batch, used, s->end) == (ssize_t)used) s->end += (off_t)used;
            s->unsynced = 1;
        }
        if (now_ns() - last_sync >= 1000000000ull) {
            last_sync = now_ns();
            for (int i = 0; i < stream_count; i++) {
                if (streams[i].unsynced) { fdatasync(streams[i].fd); streams[i].unsynced = 0; }
            }
        }
    }
    return NULL;
}

static void journal_gather(int stream, uint64_t sequence, const void *topic, uint32_t topic_length,
                           const void *payload, uint32_t payload_length) {
    struct journal_stream *s = &streams[stream];
    pthread_mutex_lock(&streams_lock);
    size_t need = s->used + 8 + 20 + topic_length + payload_length;
    if (need > s->capacity) { s->capacity = need * 2; s->pending = realloc(s->pending, s->capacity); }
    s->used += journal_record(s->pending + s->used, sequence, topic, topic_length, payload, payload_length);
    pthread_mutex_unlock(&streams_lock);
}


// `--pose-records`: a file of records, each a UInt32 length (little-endian) and a pose record as
// `kinesia ingest` publishes it (header and pose, wire format section 4).
static int load_recording(const char *path) {
    if (recording_count == 64) { fprintf(stderr, "floor: at most 64 --pose-records\n"); return -1; }
    FILE *file = fopen(path, "rb");
    if (!file) { perror(path); return -1; }
    struct recording *r = &recordings[recording_count];
    int capacity = 0;
    uint32_t length;
    double last_t = 0;
    while (fread(&length, 4, 1, file) == 1) {
        if (length < 37 || length > 65536) { fprintf(stderr, "floor: %s: bad record length %u\n", path, length); return -1; }
        if (r->count == capacity) {
            capacity = capacity ? capacity * 2 : 1024;
            r->records = realloc(r->records, (size_t)capacity * sizeof *r->records);
            r->lengths = realloc(r->lengths, (size_t)capacity * sizeof *r->lengths);
        }
        unsigned char *record = malloc(length);
        if (fread(record, 1, length, file) != length) { fprintf(stderr, "floor: %s: truncated\n", path); return -1; }
        memcpy(&last_t, record + 28, 8);
        r->records[r->count] = record;
        r->lengths[r->count++] = length;
    }
    fclose(file);
    if (r->count == 0) { fprintf(stderr, "floor: %s: no records\n", path); return -1; }
    r->duration = last_t;  // plus a frame's time once --fps is known (main)
    recording_count++;
    return 0;
}

// `--analyze 1`: the worker's work on each pose, in C, so that the floor is equal work for
// `kinesia worker` (whose sessions analyse every pose and answer with a snapshot): the pose
// record decoded with the wire format's checks (section 4); per session (left, right: shoulder
// abduction, catalog) the measure (the upper arm's angle from the trunk) smoothed, its best, the
// form measures its rules judge (elbow flexion, trunk lean, shoulder tilt), reps counted from 30
// to 20 degrees with a peak of at least 60, the lowest confidence of the joints used, their
// visibility, the placement (too far, too close, sideways), and the snapshot written as JSON with
// every key `kinesia worker` writes, in its order, numbers round-trip exact (%.17g).
enum { JOINTS = 19 };
struct pose {
    double t, width, height;
    int has_size;
    unsigned char has_point[JOINTS], has_confidence[JOINTS];
    double x[JOINTS], y[JOINTS], confidence[JOINTS];
};

static int decode_pose(const unsigned char *p, int n, struct pose *out) {
    if (n < 39 || p[0] != 'K' || p[1] != 'W' || p[2] != 1 || p[3] != 1) return -1;
    int o = 28;
    memcpy(&out->t, p + o, 8);
    o += 8;
    if (!isfinite(out->t)) return -1;
    unsigned char flags = p[o++];
    if (flags & ~1u) return -1;
    out->has_size = flags & 1;
    if (out->has_size) {
        if (o + 16 > n) return -1;
        memcpy(&out->width, p + o, 8);
        memcpy(&out->height, p + o + 8, 8);
        o += 16;
        if (!isfinite(out->width) || !isfinite(out->height) || out->width < 0 || out->height < 0) return -1;
    }
    memset(out->has_point, 0, sizeof out->has_point);
    memset(out->has_confidence, 0, sizeof out->has_confidence);
    if (o + 1 > n) return -1;
    int count = p[o++];
    if (count > JOINTS) return -1;
    for (int i = 0; i < count; i++, o += 17) {
        if (o + 17 > n) return -1;
        int joint = p[o];
        if (joint >= JOINTS || out->has_point[joint]) return -1;
        memcpy(&out->x[joint], p + o + 1, 8);
        memcpy(&out->y[joint], p + o + 9, 8);
        if (!isfinite(out->x[joint]) || !isfinite(out->y[joint])) return -1;
        out->has_point[joint] = 1;
    }
    if (o + 1 > n) return -1;
    count = p[o++];
    if (count > JOINTS) return -1;
    for (int i = 0; i < count; i++, o += 9) {
        if (o + 9 > n) return -1;
        int joint = p[o];
        if (joint >= JOINTS || out->has_confidence[joint]) return -1;
        memcpy(&out->confidence[joint], p + o + 1, 8);
        if (!isfinite(out->confidence[joint])) return -1;
        out->has_confidence[joint] = 1;
    }
    return o == n ? 0 : -1;
}

static const char *joint_names[JOINTS] = {
    "nose", "leftEye", "rightEye", "leftEar", "rightEar", "neck", "root", "leftShoulder", "rightShoulder",
    "leftElbow", "rightElbow", "leftWrist", "rightWrist", "leftHip", "rightHip", "leftKnee", "rightKnee",
    "leftAnkle", "rightAnkle"};

struct session_state {
    int has_value, rising, rep_faults, has_last_rep, reps, rejected;
    double value, best, rep_start, rep_peak, last_peak, last_start, last_end;
    int last_faults;
};

// The angle at `b` between `a` and `c`, degrees.
static double angle_at(const struct pose *p, int a, int b, int c) {
    double ux = p->x[a] - p->x[b], uy = p->y[a] - p->y[b], vx = p->x[c] - p->x[b], vy = p->y[c] - p->y[b];
    return fabs(atan2(ux * vy - uy * vx, ux * vx + uy * vy)) * 180.0 / M_PI;
}

// A line's angle from the horizontal (`vertical` 0) or the vertical (1), degrees, 0...90.
static double line_angle(double dx, double dy, int vertical) {
    return atan2(fabs(vertical ? dx : dy), fabs(vertical ? dy : dx)) * 180.0 / M_PI;
}

static void append_number(char *out, size_t size, double value, int has) {
    if (has) snprintf(out, size, "%.17g", value);
    else snprintf(out, size, "null");
}

// Analyses `p` for one side (0 left, 1 right) and writes its snapshot's JSON; its length.
static int analyze_pose(const struct pose *p, int side, struct session_state *s, char *json, size_t size) {
    const int shoulder = 7 + side, elbow = 9 + side, wrist = 11 + side, hip = 13 + side;
    const int other_shoulder = 8 - side, other_hip = 14 - side;
    const int needed[6] = {shoulder, elbow, wrist, hip, other_shoulder, other_hip};
    char missing[160] = "";
    size_t missing_length = 0;
    int visible = 1;
    double confidence = 1;
    int has_confidence = 0;
    for (int i = 0; i < 6; i++) {
        int j = needed[i];
        int seen = p->has_point[j] && (!p->has_confidence[j] || p->confidence[j] >= 0.3);
        if (!seen) {
            visible = 0;
            missing_length += (size_t)snprintf(missing + missing_length, sizeof missing - missing_length, "%s\"%s\"",
                                               missing_length ? "," : "", joint_names[j]);
        }
        if (p->has_confidence[j]) {
            if (!has_confidence || p->confidence[j] < confidence) confidence = p->confidence[j];
            has_confidence = 1;
        }
    }
    const char *issues = "";
    if (visible) {
        double measure = angle_at(p, hip, shoulder, elbow);
        double elbow_flexion = 180.0 - angle_at(p, shoulder, elbow, wrist);
        double trunk_lean = line_angle((p->x[shoulder] + p->x[other_shoulder]) / 2 - (p->x[hip] + p->x[other_hip]) / 2,
                                       (p->y[shoulder] + p->y[other_shoulder]) / 2 - (p->y[hip] + p->y[other_hip]) / 2, 1);
        double tilt = line_angle(p->x[shoulder] - p->x[other_shoulder], p->y[shoulder] - p->y[other_shoulder], 0);
        s->value = s->has_value ? 0.4 * measure + 0.6 * s->value : measure;
        s->has_value = 1;
        if (s->value > s->best) s->best = s->value;
        if (s->rising) {
            if (s->value > s->rep_peak) s->rep_peak = s->value;
            s->rep_faults |= (elbow_flexion > 30) | (trunk_lean > 15) << 1 | (tilt > 12) << 2;
            if (s->value < 20) {
                s->rising = 0;
                if (s->rep_faults == 0 && s->rep_peak >= 60) s->reps++;
                else s->rejected++;
                s->has_last_rep = 1;
                s->last_peak = s->rep_peak;
                s->last_start = s->rep_start;
                s->last_end = p->t;
                s->last_faults = s->rep_faults;
            }
        } else if (s->value > 30) {
            s->rising = 1;
            s->rep_start = p->t;
            s->rep_peak = s->value;
            s->rep_faults = 0;
        }
        double trunk = hypot(p->x[shoulder] - p->x[hip], p->y[shoulder] - p->y[hip]);
        double shoulders = hypot(p->x[shoulder] - p->x[other_shoulder], p->y[shoulder] - p->y[other_shoulder]);
        if (p->has_size && p->height > 0 && trunk / p->height < 0.08) issues = "\"tooFar\"";
        else if (p->has_size && p->height > 0 && trunk / p->height > 0.6) issues = "\"tooClose\"";
        else if (shoulders < 0.3 * trunk) issues = "\"faceCamera\"";
    }
    char value[32], best[32], conf[32], last_rep[200];
    append_number(value, sizeof value, s->value, visible && s->has_value);
    append_number(best, sizeof best, s->best, 1);
    append_number(conf, sizeof conf, confidence, has_confidence);
    if (s->has_last_rep) {
        static const char *fault_names[3] = {"\"keepElbowStraight\"", "\"keepTrunkUpright\"", "\"keepShouldersLevel\""};
        char faults[80] = "";
        size_t faults_length = 0;
        for (int f = 0; f < 3; f++)
            if (s->last_faults & (1 << f))
                faults_length += (size_t)snprintf(faults + faults_length, sizeof faults - faults_length, "%s%s",
                                                  faults_length ? "," : "", fault_names[f]);
        snprintf(last_rep, sizeof last_rep, "{\"peak\":%.17g,\"faults\":[%s],\"start\":%.17g,\"end\":%.17g}",
                 s->last_peak, faults, s->last_start, s->last_end);
    } else {
        snprintf(last_rep, sizeof last_rep, "null");
    }
    return snprintf(json, size,
                    "{\"type\":\"snapshot\",\"t\":%.17g,\"value\":%s,\"best\":%s,\"repCount\":%d,\"rejectedCount\":%d,"
                    "\"lastRep\":%s,\"holdProgress\":null,\"confidence\":%s,\"setupIssues\":[%s],\"isVisible\":%s,"
                    "\"missingJoints\":[%s],\"isRunning\":true,\"baseline\":null}",
                    p->t, value, best, s->reps, s->rejected, last_rep, conf, issues, visible ? "true" : "false",
                    missing);
}

static void publisher(int index) {
    void *ctx = zmq_ctx_new();
    void *s = zmq_socket(ctx, ZMQ_XPUB);
    set_int(s, ZMQ_SNDHWM, 10000);
    set_int(s, ZMQ_XPUB_NODROP, 1);
    set_int(s, ZMQ_LINGER, 0);
    check(zmq_connect(s, pub_endpoint), "publisher connect");
    int mine[4096], count = 0;
    for (int k = index; k < cameras && count < 4096; k += publishers) mine[count++] = k;
    // Wait for the subscriptions of this process's cameras.
    int subscribed = 0;
    char buffer[256];
    while (subscribed < count && !stopping) {
        int n = zmq_recv(s, buffer, sizeof buffer - 1, ZMQ_DONTWAIT);
        if (n > 0 && buffer[0] == 1) subscribed++;
        else usleep(1000);
    }
    unsigned char *record = calloc(1, 65536);
    memcpy(record, "KW\x01\x01", 4);
    if (pose_template) memcpy(record, pose_template, (size_t)pose_bytes);
    size_t record_bytes = (size_t)pose_bytes;
    // With `--pose-records`, each camera's next record in its recording (looped, times going on).
    int *position = calloc((size_t)count, sizeof *position);
    uint64_t *sequence = calloc((size_t)count, sizeof *sequence);
    uint64_t period = (uint64_t)(1e9 / fps);
    uint64_t *due = calloc((size_t)count, sizeof *due);
    uint64_t start = now_ns();
    for (int i = 0; i < count; i++) due[i] = start + period * (uint64_t)i / (uint64_t)count;
    char topic[64];
    int *journal_fd = calloc((size_t)count, sizeof *journal_fd);
    off_t *journal_end = calloc((size_t)count, sizeof *journal_end);
    unsigned char *journal_buffer = malloc(65536 + 128);
    uint64_t last_sync = now_ns();
    if (journal_dir) {
        for (int i = 0; i < count; i++) {
            char name[64];
            snprintf(name, sizeof name, "pub-cam%d", mine[i]);
            journal_fd[i] = journal_open(name);
        }
    }
    while (!stopping) {
        int next = 0;
        for (int i = 1; i < count; i++) if (due[i] < due[next]) next = i;
        uint64_t now = now_ns();
        if (due[next] > now) {
            struct timespec ts = {0, (long)(due[next] - now)};
            nanosleep(&ts, NULL);
            continue;
        }
        int topic_length = snprintf(topic, sizeof topic, "pose/cam%d/", mine[next]);
        if (recording_count) {
            const struct recording *r = &recordings[mine[next] % recording_count];
            int at = position[next]++ % r->count, loop = (position[next] - 1) / r->count;
            record_bytes = r->lengths[at];
            memcpy(record, r->records[at], record_bytes);
            double t;
            memcpy(&t, record + 28, 8);
            t += loop * r->duration;
            memcpy(record + 28, &t, 8);
        } else if (pose_template) {
            double t = (double)sequence[next] / fps;
            memcpy(record + 28, &t, 8);
        }
        put_u64(record + 12, sequence[next]++);
        put_u64(record + 20, now_ns());
        if (journal_dir) {
            // Journaled before it is sent, as `kinesia ingest` does; synced every 200 ms.
            size_t size = journal_record(journal_buffer, sequence[next] - 1, topic, (uint32_t)topic_length,
                                         record, (uint32_t)record_bytes);
            if (pwrite(journal_fd[next], journal_buffer, size, journal_end[next]) == (ssize_t)size)
                journal_end[next] += (off_t)size;
            if (now_ns() - last_sync >= 200000000ull) {
                last_sync = now_ns();
                for (int i = 0; i < count; i++) fdatasync(journal_fd[i]);
            }
        }
        if (zmq_send(s, topic, (size_t)topic_length, ZMQ_SNDMORE) < 0 ||
            zmq_send(s, record, record_bytes, 0) < 0) {
            if (stopping) break;
        }
        due[next] += period;
    }
    _exit(0);
}

static void worker(int index) {
    void *ctx = zmq_ctx_new();
    void *in = zmq_socket(ctx, ZMQ_SUB), *out = zmq_socket(ctx, ZMQ_PUB);
    set_int(in, ZMQ_RCVHWM, 10000);
    set_int(out, ZMQ_SNDHWM, 10000);
    set_int(in, ZMQ_LINGER, 0);
    set_int(out, ZMQ_LINGER, 0);
    set_int(in, ZMQ_RCVTIMEO, 100);
    char topic[64];
    for (int k = index; k < cameras; k += workers) {
        int n = snprintf(topic, sizeof topic, "pose/cam%d/", k);
        check(zmq_setsockopt(in, ZMQ_SUBSCRIBE, topic, (size_t)n), "subscribe");
    }
    check(zmq_connect(in, sub_endpoint), "worker connect in");
    check(zmq_connect(out, pub_endpoint), "worker connect out");
    unsigned char pose[65536];
    unsigned char *answer = calloc(1, (size_t)answer_bytes + 64);
    memcpy(answer, "KW\x01\x03", 4);
    uint64_t *sequence = calloc((size_t)(cameras * sessions), sizeof *sequence);
    // `--analyze`: each session's state and its snapshot (header, the pose's send time, JSON).
    struct session_state *state = calloc((size_t)(cameras * sessions), sizeof *state);
    unsigned char **snapshots = calloc((size_t)sessions, sizeof *snapshots);
    int *snapshot_bytes = calloc((size_t)sessions, sizeof *snapshot_bytes);
    for (int s = 0; s < sessions; s++) {
        snapshots[s] = calloc(1, 2048);
        memcpy(snapshots[s], "KW\x01\x03", 4);
    }
    struct pose decoded;
    long rejected = 0;
    if (journal_dir) {
        stream_count = cameras * sessions;
        streams = calloc((size_t)stream_count, sizeof *streams);
        for (int k = index; k < cameras; k += workers) {
            for (int s = 0; s < sessions; s++) {
                char name[64];
                snprintf(name, sizeof name, "work-cam%d-s%d", k, s);
                streams[k * sessions + s].fd = journal_open(name);
            }
        }
        pthread_t thread;
        pthread_create(&thread, NULL, journal_thread, NULL);
    }
    while (!stopping) {
        int n = zmq_recv(in, topic, sizeof topic - 1, 0);
        if (n < 0) continue;
        topic[n] = 0;
        int more = 0;
        size_t size = sizeof more;
        zmq_getsockopt(in, ZMQ_RCVMORE, &more, &size);
        if (!more) continue;
        int length = zmq_recv(in, pose, sizeof pose, 0);
        if (length < 28) continue;
        int camera = atoi(topic + 8);
        if (camera < 0 || camera >= cameras) continue;
        if (analyze) {
            // Every session analyses the pose before the first answer goes (as the worker's core).
            if (decode_pose(pose, length, &decoded) < 0) {
                // Told at once: the process ends by SIGTERM.
                if (rejected++ == 0)
                    fprintf(stderr, "floor: worker %d: a pose record of %d bytes failed to decode\n", index, length);
                continue;
            }
            for (int s = 0; s < sessions; s++) {
                int json = analyze_pose(&decoded, s % 2, &state[camera * sessions + s], (char *)snapshots[s] + 36,
                                        2048 - 36);
                snapshot_bytes[s] = 36 + (json < 2048 - 36 ? json : 2048 - 37);
            }
        }
        for (int s = 0; s < sessions; s++) {
            char out_topic[64];
            int out_length = snprintf(out_topic, sizeof out_topic, "snap/cam%d/s%d/", camera, s);
            unsigned char *message = analyze ? snapshots[s] : answer;
            int message_bytes = analyze ? snapshot_bytes[s] : answer_bytes;
            put_u64(message + 12, sequence[camera * sessions + s]++);
            put_u64(message + 20, now_ns());
            memcpy(message + 28, pose + 20, 8);  // the pose's send time
            if (journal_dir)
                journal_gather(camera * sessions + s, sequence[camera * sessions + s] - 1, out_topic,
                               (uint32_t)out_length, message, (uint32_t)message_bytes);
            zmq_send(out, out_topic, (size_t)out_length, ZMQ_SNDMORE);
            zmq_send(out, message, (size_t)message_bytes, 0);
        }
    }
    _exit(0);
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *key = argv[i], *value = argv[i + 1];
        if (!strcmp(key, "--cameras")) cameras = atoi(value);
        else if (!strcmp(key, "--publishers")) publishers = atoi(value);
        else if (!strcmp(key, "--workers")) workers = atoi(value);
        else if (!strcmp(key, "--sessions")) sessions = atoi(value);
        else if (!strcmp(key, "--fps")) fps = atof(value);
        else if (!strcmp(key, "--seconds")) seconds = atof(value);
        else if (!strcmp(key, "--warmup")) warmup = atof(value);
        else if (!strcmp(key, "--pose-bytes")) pose_bytes = atoi(value);
        else if (!strcmp(key, "--answer-bytes")) answer_bytes = atoi(value);
        else if (!strcmp(key, "--bus")) external_bus = value;
        else if (!strcmp(key, "--pose-template")) {
            FILE *file = fopen(value, "rb");
            if (!file) { perror(value); return 1; }
            pose_template = malloc(65536);
            pose_bytes = (int)fread(pose_template, 1, 65536, file);
            fclose(file);
        }
        else if (!strcmp(key, "--pose-records")) {
            if (load_recording(value) < 0) return 1;
        }
        else if (!strcmp(key, "--analyze")) analyze = atoi(value);
        else if (!strcmp(key, "--publishers-only")) publishers_only = atoi(value);
        else if (!strcmp(key, "--journal")) journal_dir = value;
        else { fprintf(stderr, "floor: unknown option %s\n", key); return 64; }
    }
    if (cameras < 1 || publishers < 1 || workers < 1 || sessions < 1 || pose_bytes < 36 ||
        answer_bytes < 36) {
        fprintf(stderr, "floor: bad option values\n");
        return 64;
    }
    for (int i = 0; i < recording_count; i++) recordings[i].duration += 1.0 / fps;
    if (analyze && !recording_count) {
        fprintf(stderr, "floor: --analyze needs real poses (--pose-records)\n");
        return 64;
    }
    if (publishers > cameras) publishers = cameras;
    if (workers > cameras) workers = cameras;
    if (external_bus) {
        snprintf(dir, sizeof dir, "%s", external_bus);
    } else {
        snprintf(dir, sizeof dir, "/tmp/kinesia-floor-XXXXXX");
        if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
    }
    snprintf(pub_endpoint, sizeof pub_endpoint, "ipc://%s/pub.sock", dir);
    snprintf(sub_endpoint, sizeof sub_endpoint, "ipc://%s/sub.sock", dir);
    signal(SIGTERM, on_term);
    crc_init();
    if (journal_dir && mkdir(journal_dir, 0700) < 0 && errno != EEXIST) {
        perror(journal_dir);
        return 1;
    }

    pid_t children[4200];
    int child_count = 0;
    pid_t pid;
    if (!external_bus) {
        pid = fork();
        if (pid == 0) {
            signal(SIGTERM, SIG_DFL);
            broker();
        }
        children[child_count++] = pid;
        usleep(200000);
    }
    for (int w = 0; w < workers; w++) {
        pid = fork();
        if (pid == 0) {
            signal(SIGTERM, SIG_DFL);
            worker(w);
        }
        children[child_count++] = pid;
    }

    void *ctx = zmq_ctx_new();
    void *sub = zmq_socket(ctx, ZMQ_SUB);
    set_int(sub, ZMQ_RCVHWM, 0);
    set_int(sub, ZMQ_LINGER, 0);
    set_int(sub, ZMQ_RCVTIMEO, 50);
    zmq_setsockopt(sub, ZMQ_SUBSCRIBE, "pose/", 5);
    zmq_setsockopt(sub, ZMQ_SUBSCRIBE, "snap/", 5);
    check(zmq_connect(sub, sub_endpoint), "consumer connect");
    usleep(300000);
    if (publishers_only) {
        for (int p = 0; p < publishers; p++) {
            pid = fork();
            if (pid == 0) {
                signal(SIGTERM, SIG_DFL);
                publisher(p);
            }
            children[child_count++] = pid;
        }
        usleep((useconds_t)(seconds * 1e6));
        for (int i = 0; i < child_count; i++) kill(children[i], SIGTERM);
        for (int i = 0; i < child_count; i++) waitpid(children[i], NULL, 0);
        return 0;
    }
    for (int p = 0; p < publishers; p++) {
        pid = fork();
        if (pid == 0) {
            signal(SIGTERM, SIG_DFL);
            publisher(p);
        }
        children[child_count++] = pid;
    }

    uint64_t started = now_ns();
    uint64_t measure_from = started + (uint64_t)(warmup * 1e9);
    uint64_t deadline = started + (uint64_t)(seconds * 1e9);
    uint64_t count_until = deadline - 1000000000ull;
    size_t capacity = 1 << 16, samples = 0;
    double *latency = malloc(capacity * sizeof *latency);
    double *first_leg = malloc(capacity * sizeof *first_leg);
    double *second_leg = malloc(capacity * sizeof *second_leg);
    long poses_counted = 0, answers_counted = 0, poses_seen = 0, answers_seen = 0, gaps = 0;
    uint64_t *last_pose_sequence = calloc((size_t)cameras, sizeof(uint64_t));
    char *have_pose = calloc((size_t)cameras, 1);
    char topic[64];
    unsigned char payload[65536];
    while (now_ns() < deadline) {
        int n = zmq_recv(sub, topic, sizeof topic - 1, 0);
        if (n < 0) continue;
        topic[n] = 0;
        int length = zmq_recv(sub, payload, sizeof payload, 0);
        uint64_t received = now_ns();
        if (length < 36) continue;
        if (topic[0] == 'p') {
            poses_seen++;
            int camera = atoi(topic + 8);
            uint64_t sequence = get_u64(payload + 12), sent = get_u64(payload + 20);
            if (camera >= 0 && camera < cameras) {
                if (have_pose[camera] && sequence > last_pose_sequence[camera] + 1)
                    gaps += (long)(sequence - last_pose_sequence[camera] - 1);
                have_pose[camera] = 1;
                last_pose_sequence[camera] = sequence;
            }
            if (sent >= measure_from && sent < count_until) poses_counted++;
        } else {
            answers_seen++;
            uint64_t sent = get_u64(payload + 28);
            if (sent >= measure_from && sent < count_until) answers_counted++;
            if (sent >= measure_from && received >= sent) {
                if (samples == capacity) {
                    capacity *= 2;
                    latency = realloc(latency, capacity * sizeof *latency);
                    first_leg = realloc(first_leg, capacity * sizeof *first_leg);
                    second_leg = realloc(second_leg, capacity * sizeof *second_leg);
                }
                uint64_t relayed = get_u64(payload + 20);
                first_leg[samples] = (double)(int64_t)(relayed - sent) / 1000.0;
                second_leg[samples] = (double)(int64_t)(received - relayed) / 1000.0;
                latency[samples++] = (double)(received - sent) / 1000.0;
            }
        }
    }
    for (int i = 0; i < child_count; i++) kill(children[i], SIGTERM);
    for (int i = 0; i < child_count; i++) waitpid(children[i], NULL, 0);
    zmq_close(sub);
    zmq_ctx_term(ctx);
    if (!external_bus) {
        char path[400];
        snprintf(path, sizeof path, "%s/pub.sock", dir);
        unlink(path);
        snprintf(path, sizeof path, "%s/sub.sock", dir);
        unlink(path);
        rmdir(dir);
    }

    qsort(latency, samples, sizeof *latency, compare);
    qsort(first_leg, samples, sizeof *first_leg, compare);
    qsort(second_leg, samples, sizeof *second_leg, compare);
    long expected = poses_counted * sessions;
    long lost = expected - answers_counted;
    if (lost < 0) lost = 0;
    printf("{\"impl\":\"c\",\"bench\":\"e2e-floor\",\"cameras\":%d,\"publishers\":%d,\"workers\":%d,"
           "\"sessions\":%d,\"fps\":%g,\"pose_bytes\":%d,\"answer_bytes\":%d,\"poses_seen\":%ld,"
           "\"answers_seen\":%ld,\"samples\":%zu,\"median_us\":%.1f,\"p99_us\":%.1f,\"max_us\":%.1f,"
           "\"expected_answers\":%ld,\"lost_answers\":%ld,\"loss_fraction\":%.6f,\"pose_gaps\":%ld,"
           "\"first_leg_median_us\":%.1f,\"second_leg_median_us\":%.1f}\n",
           cameras, publishers, workers, sessions, fps, pose_bytes, answer_bytes, poses_seen,
           answers_seen, samples, samples ? latency[samples / 2] : 0.0,
           samples ? latency[(size_t)(samples * 0.99) < samples ? (size_t)(samples * 0.99) : samples - 1] : 0.0,
           samples ? latency[samples - 1] : 0.0, expected, lost,
           expected ? (double)lost / (double)expected : 0.0, gaps,
           samples ? first_leg[samples / 2] : 0.0, samples ? second_leg[samples / 2] : 0.0);
    return 0;
}
