#ifndef KINESIA_CMICROHTTPD_SHIM_H
#define KINESIA_CMICROHTTPD_SHIM_H
// GNU libmicrohttpd, as Debian ships it. Its daemon start and daemon info are variadic, which
// Swift cannot call: these wrappers pass the options kinesia web uses.
#include <stdarg.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/select.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <microhttpd.h>

/// Starts a daemon on IPv4 address `host` (dotted quad) and `port` (0: the system chooses),
/// as kinesia_mhd_start; NULL with *invalid_address set when `host` is not an IPv4 address.
static inline struct MHD_Daemon *kinesia_mhd_start_ipv4(
    const char *host, uint16_t port, unsigned int connection_limit, unsigned int per_address_limit,
    unsigned int timeout_seconds, size_t memory_limit, MHD_AccessHandlerCallback handler, void *context,
    MHD_RequestCompletedCallback completed, MHD_NotifyConnectionCallback connections, const char *certificate,
    const char *key, int *invalid_address);

/// Starts a daemon on `address` with a thread of its own for listening and one per connection
/// (so that a handler, or a streamed body, may wait without holding up the others; 512 KiB of
/// stack each), at most `connection_limit` connections (and `per_address_limit` from one
/// address), each closed after `timeout_seconds` without traffic and given `memory_limit` bytes
/// for its request (headers beyond it are refused with 431), `handler` called for each request;
/// with `certificate` and `key` (PEM text, both or neither) it speaks TLS only (GnuTLS).
static inline struct MHD_Daemon *kinesia_mhd_start(
    const struct sockaddr *address, unsigned int connection_limit, unsigned int per_address_limit,
    unsigned int timeout_seconds, size_t memory_limit, MHD_AccessHandlerCallback handler, void *context,
    MHD_RequestCompletedCallback completed, MHD_NotifyConnectionCallback connections, const char *certificate,
    const char *key) {
    unsigned int flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_ERROR_LOG;
    struct MHD_OptionItem options[] = {
        {MHD_OPTION_THREAD_STACK_SIZE, 512 * 1024, NULL},
        {MHD_OPTION_SOCK_ADDR, 0, (void *)address},
        {MHD_OPTION_CONNECTION_LIMIT, connection_limit, NULL},
        {MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_address_limit, NULL},
        {MHD_OPTION_CONNECTION_TIMEOUT, timeout_seconds, NULL},
        {MHD_OPTION_CONNECTION_MEMORY_LIMIT, (intptr_t)memory_limit, NULL},
        {MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)completed, context},
        {MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)connections, context},
        // The certificate and its key, or the end.
        {MHD_OPTION_END, 0, NULL},
        {MHD_OPTION_END, 0, NULL},
        {MHD_OPTION_END, 0, NULL},
    };
    if (certificate != NULL && key != NULL) {
        options[8] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_CERT, 0, (void *)certificate};
        options[9] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)key};
        flags |= MHD_USE_TLS;
    }
    return MHD_start_daemon(flags, 0, NULL, NULL, handler, context, MHD_OPTION_ARRAY, options, MHD_OPTION_END);
}

/// What the connection callback set for `connection` (NULL: nothing).
static inline void *kinesia_mhd_socket_context(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info == NULL ? NULL : info->socket_context;
}

static inline int kinesia_mhd_is_connection_start(enum MHD_ConnectionNotificationCode code) {
    return code == MHD_CONNECTION_NOTIFY_STARTED;
}

static inline int kinesia_mhd_ended_well(enum MHD_RequestTerminationCode code) {
    return code == MHD_REQUEST_TERMINATED_COMPLETED_OK || code == MHD_REQUEST_TERMINATED_DAEMON_SHUTDOWN;
}

/// Whether this libmicrohttpd speaks TLS.
static inline int kinesia_mhd_has_tls(void) { return MHD_is_feature_supported(MHD_FEATURE_TLS) == MHD_YES; }

static inline struct MHD_Daemon *kinesia_mhd_start_ipv4(
    const char *host, uint16_t port, unsigned int connection_limit, unsigned int per_address_limit,
    unsigned int timeout_seconds, size_t memory_limit, MHD_AccessHandlerCallback handler, void *context,
    MHD_RequestCompletedCallback completed, MHD_NotifyConnectionCallback connections, const char *certificate,
    const char *key, int *invalid_address) {
    struct sockaddr_in address;
    memset(&address, 0, sizeof address);
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    *invalid_address = inet_pton(AF_INET, host, &address.sin_addr) == 1 ? 0 : 1;
    if (*invalid_address) return NULL;
    return kinesia_mhd_start(
        (const struct sockaddr *)&address, connection_limit, per_address_limit, timeout_seconds, memory_limit,
        handler, context, completed, connections, certificate, key);
}

/// The port the daemon is bound to (the one the system chose for port 0), or 0.
static inline uint16_t kinesia_mhd_bound_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

/// The number of connections open now.
static inline unsigned int kinesia_mhd_connections(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
    return info == NULL ? 0 : info->num_connections;
}

/// The library's constants, as functions (its enums import differently by attribute).
static inline enum MHD_Result kinesia_mhd_yes(void) { return MHD_YES; }
static inline enum MHD_Result kinesia_mhd_no(void) { return MHD_NO; }
static inline enum MHD_ValueKind kinesia_mhd_header_kind(void) { return MHD_HEADER_KIND; }
static inline enum MHD_ValueKind kinesia_mhd_cookie_kind(void) { return MHD_COOKIE_KIND; }
static inline enum MHD_ValueKind kinesia_mhd_argument_kind(void) { return MHD_GET_ARGUMENT_KIND; }
static inline enum MHD_ResponseMemoryMode kinesia_mhd_must_copy(void) { return MHD_RESPMEM_MUST_COPY; }
static inline uint64_t kinesia_mhd_size_unknown(void) { return MHD_SIZE_UNKNOWN; }
static inline ssize_t kinesia_mhd_end_of_stream(void) { return MHD_CONTENT_READER_END_OF_STREAM; }

#endif
