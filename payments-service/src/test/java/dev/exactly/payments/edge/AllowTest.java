package dev.exactly.payments.edge;

import static org.assertj.core.api.Assertions.assertThat;

import dev.exactly.payments.DefaultServiceTest;
import java.util.Arrays;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;

/**
 * A 405 names the methods its path takes (RFC 9110, sections 10.2.1 and 15.5.6), the same whoever refuses
 * the method and the same as {@code OPTIONS} says. Before, Tomcat's refusal of {@code TRACE} listed every
 * method the dispatcher servlet implements ({@code HEAD, DELETE, POST, GET, OPTIONS, PUT}, on a path that
 * takes neither PUT nor DELETE), and Spring's 405 left out {@code HEAD} and {@code OPTIONS}.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class AllowTest extends DefaultServiceTest {
    private static final String KEYED = "Authorization: Bearer " + ACME;

    private RawHttp.Response send(String method, String path) {
        return RawHttp.send(
                port,
                method + " " + path + " HTTP/1.1\r\nHost: x\r\n" + KEYED
                        + (method.equals("PUT") || method.equals("PATCH") ? "\r\nContent-Length: 0" : ""),
                new byte[0]);
    }

    private static Set<String> methods(String allow) {
        return new TreeSet<>(Arrays.stream(allow.split(","))
                .map(String::strip)
                .filter(m -> !m.isEmpty())
                .toList());
    }

    @Test
    void traceIsRefusedWithThePathsOwnMethods() {
        RawHttp.Response charges = send("TRACE", "/v1/charges");
        assertThat(charges.status()).as(charges.toString()).isEqualTo(405);
        assertThat(charges.isProblem()).isTrue();
        assertThat(charges.header("allow")).isEqualTo("GET, HEAD, POST, OPTIONS");

        RawHttp.Response capture = send("TRACE", "/v1/charges/ch_1/capture");
        assertThat(capture.status()).as(capture.toString()).isEqualTo(405);
        assertThat(capture.header("allow")).isEqualTo("POST, OPTIONS");

        // a static file is served by GET (and HEAD) only
        RawHttp.Response page = RawHttp.send(port, "TRACE /index.html HTTP/1.1\r\nHost: x", new byte[0]);
        assertThat(page.status()).as(page.toString()).isEqualTo(405);
        assertThat(methods(page.header("allow"))).containsExactlyInAnyOrder("GET", "HEAD", "OPTIONS");
    }

    @Test
    void everyRefusedMethodOnAPathNamesTheSameMethodsAsOptions() {
        for (String path : new String[] {"/v1/charges", "/v1/charges/ch_1/capture", "/v1/charges/ch_1"}) {
            RawHttp.Response options = send("OPTIONS", path);
            assertThat(options.status()).as(path + ": " + options).isEqualTo(200);
            Set<String> offered = methods(options.header("allow"));
            assertThat(offered).as(path).contains("OPTIONS").doesNotContain("TRACE");
            for (String method : new String[] {"PUT", "PATCH", "DELETE", "TRACE"}) {
                if (offered.contains(method)) {
                    continue;
                }
                RawHttp.Response refused = send(method, path);
                assertThat(refused.status())
                        .as(method + " " + path + ": " + refused)
                        .isEqualTo(405);
                assertThat(methods(refused.header("allow")))
                        .as(method + " " + path)
                        .isEqualTo(offered);
            }
        }
    }
}
