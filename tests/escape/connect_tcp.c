/*
 * Connects to the TCP listener the test opened on 127.0.0.1 and sends a
 * line.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "escape.h"

static void escape_attempt(void)
{
        struct sockaddr_in a = {
            .sin_family = AF_INET,
            .sin_port = htons((uint16_t)escape_port),
            .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
        };
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

        if (fd < 0)
                return;
        if (connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0)
                (void)!write(fd, "escaped\n", 8);
        close(fd);
}
