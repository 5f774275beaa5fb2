package dev.exactly.idempotency.servlet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The resolvers against requests a real container parsed. */
class TenantResolverHttpTest {
    private static final TestApp app = new TestApp();
    private static TestServer server;
    private static volatile TenantResolver resolver = TenantResolver.principal();

    @BeforeAll
    static void start() throws Exception {
        app.handler((request, response) ->
                response.getWriter().print(resolver.resolve(request).orElse("<none>")));
        server = TestServer.start(app, new TestApp.FakeAuthentication());
    }

    @AfterAll
    static void stop() throws Exception {
        server.close();
    }

    private static String resolve(TenantResolver tenantResolver, String... headers) throws Exception {
        resolver = tenantResolver;
        Call call = Call.request(server, "GET", "/whoami");
        for (int i = 0; i < headers.length; i += 2) {
            call.header(headers[i], headers[i + 1]);
        }
        return Call.text(call.send());
    }

    @Test
    void principal() throws Exception {
        assertThat(resolve(TenantResolver.principal(), "X-Test-User", "alice")).isEqualTo("alice");
        assertThat(resolve(TenantResolver.principal())).isEqualTo("<none>");
        assertThat(resolve(TenantResolver.principal(), "X-Test-User", " ")).isEqualTo("<none>");
    }

    @Test
    void apiKeys() throws Exception {
        TenantResolver keys = TenantResolver.apiKeys(Map.of("sk_live_a", "tenant-a", "sk_live_b", "tenant-b"));

        assertThat(resolve(keys, "Authorization", "Bearer sk_live_a")).isEqualTo("tenant-a");
        assertThat(resolve(keys, "Authorization", "bearer   sk_live_b")).isEqualTo("tenant-b");
        assertThat(resolve(keys, "Authorization", "Bearer sk_live_")).isEqualTo("<none>");
        assertThat(resolve(keys, "Authorization", "Bearer sk_live_a2")).isEqualTo("<none>");
        assertThat(resolve(keys, "Authorization", "Basic sk_live_a")).isEqualTo("<none>");
        assertThat(resolve(keys, "Authorization", "Bearer ")).isEqualTo("<none>");
        assertThat(resolve(keys)).isEqualTo("<none>");
        assertThat(keys.toString()).doesNotContain("sk_live");
        assertThatThrownBy(() -> TenantResolver.apiKeys(Map.of(" ", "t"))).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void trustedHeaderMustBeChosenAndIsStrict() throws Exception {
        TenantResolver header = TenantResolver.trustedHeader("X-Tenant-Id");

        assertThat(resolve(header, "X-Tenant-Id", "acme")).isEqualTo("acme");
        assertThat(resolve(header, "X-Tenant-Id", "acme", "X-Tenant-Id", "evil"))
                .as("sent twice")
                .isEqualTo("<none>");
        assertThat(resolve(header, "X-Tenant-Id", "has space")).isEqualTo("<none>");
        assertThat(resolve(header, "X-Tenant-Id", "t".repeat(256))).isEqualTo("<none>");
        assertThat(resolve(header)).isEqualTo("<none>");
        assertThat(resolve(TenantResolver.principal(), "X-Tenant-Id", "acme"))
                .as("no resolver reads a tenant header unless asked to")
                .isEqualTo("<none>");
    }

    @Test
    void singleAndFallback() throws Exception {
        TenantResolver chain = TenantResolver.principal().orElse(TenantResolver.single("default"));

        assertThat(resolve(chain, "X-Test-User", "bob")).isEqualTo("bob");
        assertThat(resolve(chain)).isEqualTo("default");
        assertThatThrownBy(() -> TenantResolver.single(" ")).isInstanceOf(IllegalArgumentException.class);
    }
}
