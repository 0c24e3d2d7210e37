// The floor of the bus benchmark: the same measurements as `kinesia-bench bus`, written with
// bare libzmq calls. Build and run (scripts/bench does this):
//
//   gcc -O2 -o /tmp/bench_zmq_floor scripts/bench_zmq_floor.c -lzmq -lpthread
//   /tmp/bench_zmq_floor --messages 200000 --round-trips 20000 --transport tcp
//
// `--transport inproc` (C and Swift only) leaves out the kernel: it shows the cost of the
// binding itself most clearly.
//
// Prints one JSON object per line, like the Swift and Python versions:
//   {"impl":"c","bench":"throughput","path":"direct",...,"msgs_per_sec":...}
//   {"impl":"c","bench":"latency","path":"proxy",...,"median_us":...,"p99_us":...}
//
// Method (identical in the three versions): 256-byte single-frame messages; high-water marks
// of 0 (no limit) on every socket so that nothing is dropped and what is measured is delivery,
// not loss; the publisher sends probes until the subscriber has seen one (the slow joiner),
// then the data. Throughput is measured at the subscriber from the first data message to the
// last. Latency is a ping-pong through two PUB/SUB pairs (or twice through the proxy): the
// median and 99th percentile of the round trip.
#define _GNU_SOURCE
#include <zmq.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SIZE 256

static void *ctx;
static const char *transport = "tcp";
static char ipc_dir[256];

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void check(int rc, const char *what) {
    if (rc < 0) {
        fprintf(stderr, "%s: %s\n", what, zmq_strerror(zmq_errno()));
        exit(1);
    }
}

static void *make_socket(int type) {
    void *s = zmq_socket(ctx, type);
    int zero = 0;
    check(zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof zero), "linger");
    check(zmq_setsockopt(s, ZMQ_SNDHWM, &zero, sizeof zero), "sndhwm");
    check(zmq_setsockopt(s, ZMQ_RCVHWM, &zero, sizeof zero), "rcvhwm");
    return s;
}

// Binds to a fresh endpoint of the chosen transport and writes the bound endpoint.
static void bind_fresh(void *s, const char *name, char *out, size_t out_size) {
    char want[300];
    if (strcmp(transport, "ipc") == 0)
        snprintf(want, sizeof want, "ipc://%s/%s", ipc_dir, name);
    else if (strcmp(transport, "inproc") == 0)
        snprintf(want, sizeof want, "inproc://bench-%s", name);
    else
        snprintf(want, sizeof want, "tcp://127.0.0.1:*");
    check(zmq_bind(s, want), "bind");
    size_t size = out_size;
    check(zmq_getsockopt(s, ZMQ_LAST_ENDPOINT, out, &size), "last endpoint");
}

// ---- proxy -------------------------------------------------------------------------------

struct proxy {
    pthread_t thread;
    void *frontend, *backend, *control_in, *control_out;
    char front_ep[300], back_ep[300];
};

static void *proxy_main(void *arg) {
    struct proxy *p = arg;
    zmq_proxy_steerable(p->frontend, p->backend, NULL, p->control_in);
    zmq_close(p->frontend);
    zmq_close(p->backend);
    zmq_close(p->control_in);
    return NULL;
}

static void proxy_start(struct proxy *p, const char *tag) {
    char name[64], control[64];
    p->frontend = make_socket(ZMQ_XSUB);
    p->backend = make_socket(ZMQ_XPUB);
    snprintf(name, sizeof name, "%s-front", tag);
    bind_fresh(p->frontend, name, p->front_ep, sizeof p->front_ep);
    snprintf(name, sizeof name, "%s-back", tag);
    bind_fresh(p->backend, name, p->back_ep, sizeof p->back_ep);
    snprintf(control, sizeof control, "inproc://control-%s", tag);
    p->control_in = make_socket(ZMQ_PAIR);
    check(zmq_bind(p->control_in, control), "control bind");
    p->control_out = make_socket(ZMQ_PAIR);
    check(zmq_connect(p->control_out, control), "control connect");
    pthread_create(&p->thread, NULL, proxy_main, p);
}

static void proxy_stop(struct proxy *p) {
    zmq_send(p->control_out, "TERMINATE", 9, 0);
    pthread_join(p->thread, NULL);
    zmq_close(p->control_out);
}

// ---- throughput --------------------------------------------------------------------------

struct receiver {
    const char *endpoint;
    long messages;
    atomic_int ready;
    atomic_int probed;
    double elapsed;
    long received;
};

static void *receiver_main(void *arg) {
    struct receiver *r = arg;
    void *sub = make_socket(ZMQ_SUB);
    check(zmq_setsockopt(sub, ZMQ_SUBSCRIBE, "", 0), "subscribe");
    check(zmq_connect(sub, r->endpoint), "connect");
    atomic_store(&r->ready, 1);
    zmq_msg_t msg;
    zmq_msg_init(&msg);
    double start = 0;
    long count = 0;
    while (count < r->messages) {
        check(zmq_msg_recv(&msg, sub, 0), "recv");
        const char *data = zmq_msg_data(&msg);
        if (data[0] == 'p') {
            atomic_store(&r->probed, 1);
            continue;
        }
        if (count == 0) start = now_seconds();
        count++;
    }
    r->elapsed = now_seconds() - start;
    r->received = count;
    zmq_msg_close(&msg);
    zmq_close(sub);
    return NULL;
}

static void throughput(const char *path, long messages) {
    struct proxy proxy;
    char pub_ep[300];
    void *pub = make_socket(ZMQ_PUB);
    const char *sub_ep;
    if (strcmp(path, "proxy") == 0) {
        proxy_start(&proxy, "thr");
        check(zmq_connect(pub, proxy.front_ep), "connect");
        sub_ep = proxy.back_ep;
    } else {
        bind_fresh(pub, "thr", pub_ep, sizeof pub_ep);
        sub_ep = pub_ep;
    }
    struct receiver r = {.endpoint = sub_ep, .messages = messages};
    pthread_t thread;
    pthread_create(&thread, NULL, receiver_main, &r);
    char buffer[SIZE];
    memset(buffer, 'x', SIZE);
    buffer[0] = 'p';
    while (!atomic_load(&r.probed)) {
        zmq_send(pub, buffer, SIZE, 0);
        usleep(1000);
    }
    buffer[0] = 'd';
    for (long i = 0; i < messages; i++) check(zmq_send(pub, buffer, SIZE, 0), "send");
    pthread_join(thread, NULL);
    zmq_close(pub);
    if (strcmp(path, "proxy") == 0) proxy_stop(&proxy);
    printf("{\"impl\":\"c\",\"bench\":\"throughput\",\"path\":\"%s\",\"transport\":\"%s\",\"size\":%d,"
           "\"messages\":%ld,\"received\":%ld,\"seconds\":%.6f,\"msgs_per_sec\":%.0f}\n",
           path, transport, SIZE, messages, r.received, r.elapsed, (r.received - 1) / r.elapsed);
    fflush(stdout);
}

// ---- latency -----------------------------------------------------------------------------

struct echoer {
    const char *ping_ep, *pong_ep;  // where the echoer's SUB and PUB connect (or bind if NULL)
    char bound_ep[300];
    atomic_int ready;
};

static void *echoer_main(void *arg) {
    struct echoer *e = arg;
    void *sub = make_socket(ZMQ_SUB);
    void *pub = make_socket(ZMQ_PUB);
    check(zmq_setsockopt(sub, ZMQ_SUBSCRIBE, "a", 1), "subscribe");
    check(zmq_connect(sub, e->ping_ep), "connect");
    if (e->pong_ep)
        check(zmq_connect(pub, e->pong_ep), "connect");
    else
        bind_fresh(pub, "pong", e->bound_ep, sizeof e->bound_ep);
    atomic_store(&e->ready, 1);
    char buffer[SIZE];
    for (;;) {
        int n = zmq_recv(sub, buffer, SIZE, 0);
        check(n, "recv");
        if (buffer[1] == 'q') break;
        buffer[0] = 'b';
        check(zmq_send(pub, buffer, n, 0), "send");
    }
    zmq_close(sub);
    zmq_close(pub);
    return NULL;
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void latency(const char *path, long round_trips) {
    struct proxy proxy;
    struct echoer e = {0};
    void *pub = make_socket(ZMQ_PUB);
    void *sub = make_socket(ZMQ_SUB);
    check(zmq_setsockopt(sub, ZMQ_SUBSCRIBE, "b", 1), "subscribe");
    char ping_ep[300];
    pthread_t thread;
    if (strcmp(path, "proxy") == 0) {
        proxy_start(&proxy, "lat");
        check(zmq_connect(pub, proxy.front_ep), "connect");
        check(zmq_connect(sub, proxy.back_ep), "connect");
        e.ping_ep = proxy.back_ep;
        e.pong_ep = proxy.front_ep;
        pthread_create(&thread, NULL, echoer_main, &e);
    } else {
        bind_fresh(pub, "ping", ping_ep, sizeof ping_ep);
        e.ping_ep = ping_ep;
        e.pong_ep = NULL;
        pthread_create(&thread, NULL, echoer_main, &e);
        while (!atomic_load(&e.ready)) usleep(100);
        check(zmq_connect(sub, e.bound_ep), "connect");
    }
    while (!atomic_load(&e.ready)) usleep(100);
    char buffer[SIZE], reply[SIZE];
    memset(buffer, 'x', SIZE);
    buffer[0] = 'a';
    buffer[1] = 'w';
    zmq_pollitem_t item = {sub, 0, ZMQ_POLLIN, 0};
    // Warm up until both subscriptions are live.
    for (;;) {
        zmq_send(pub, buffer, SIZE, 0);
        if (zmq_poll(&item, 1, 1) > 0) break;
    }
    while (zmq_recv(sub, reply, SIZE, ZMQ_DONTWAIT) >= 0) {}
    double *samples = malloc(sizeof(double) * round_trips);
    buffer[1] = 'd';
    for (long i = 0; i < round_trips; i++) {
        memcpy(buffer + 2, &i, sizeof i);
        double start = now_seconds();
        check(zmq_send(pub, buffer, SIZE, 0), "send");
        for (;;) {
            check(zmq_recv(sub, reply, SIZE, 0), "recv");
            long seq;
            memcpy(&seq, reply + 2, sizeof seq);
            if (reply[1] == 'd' && seq == i) break;
        }
        samples[i] = (now_seconds() - start) * 1e6;
    }
    buffer[1] = 'q';
    zmq_send(pub, buffer, SIZE, 0);
    pthread_join(thread, NULL);
    zmq_close(pub);
    zmq_close(sub);
    if (strcmp(path, "proxy") == 0) proxy_stop(&proxy);
    qsort(samples, round_trips, sizeof(double), compare);
    printf("{\"impl\":\"c\",\"bench\":\"latency\",\"path\":\"%s\",\"transport\":\"%s\",\"size\":%d,"
           "\"round_trips\":%ld,\"median_us\":%.1f,\"p99_us\":%.1f}\n",
           path, transport, SIZE, round_trips, samples[round_trips / 2],
           samples[(long)(round_trips * 0.99)]);
    fflush(stdout);
    free(samples);
}

int main(int argc, char **argv) {
    long messages = 200000, round_trips = 20000;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--messages") == 0) messages = atol(argv[i + 1]);
        else if (strcmp(argv[i], "--round-trips") == 0) round_trips = atol(argv[i + 1]);
        else if (strcmp(argv[i], "--transport") == 0) transport = argv[i + 1];
        else {
            fprintf(stderr, "usage: %s [--messages N] [--round-trips N] [--transport tcp|ipc|inproc]\n", argv[0]);
            return 64;
        }
    }
    if (messages < 2 || round_trips < 1) return 64;
    snprintf(ipc_dir, sizeof ipc_dir, "/tmp/kinesia-bench.XXXXXX");
    if (strcmp(transport, "ipc") == 0 && !mkdtemp(ipc_dir)) {
        perror("mkdtemp");
        return 1;
    }
    ctx = zmq_ctx_new();
    throughput("direct", messages);
    throughput("proxy", messages);
    latency("direct", round_trips);
    latency("proxy", round_trips);
    zmq_ctx_term(ctx);
    if (strcmp(transport, "ipc") == 0) {
        char command[300];
        snprintf(command, sizeof command, "rm -rf '%s'", ipc_dir);
        if (system(command) != 0) return 1;
    }
    return 0;
}
