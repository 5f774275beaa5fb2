package dev.exactly.idempotency.spring.boot;

import static dev.exactly.idempotency.spring.boot.StartupFailures.problems;
import static org.assertj.core.api.Assertions.assertThat;

import dev.exactly.idempotency.InFlightPolicy;
import dev.exactly.idempotency.servlet.IdempotencyFilter;
import dev.exactly.idempotency.servlet.IdempotentRoute;
import dev.exactly.idempotency.spring.Idempotent;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.boot.webmvc.autoconfigure.DispatcherServletAutoConfiguration;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code @Idempotent} methods found in Spring MVC's handler mappings: their settings, the class-level
 * annotation, path variables with a pattern, the servlet path; and every mistake, including a route also
 * configured by a property, stops the startup naming both declarations.
 */
@org.junit.jupiter.api.extension.ExtendWith(org.springframework.boot.test.system.OutputCaptureExtension.class)
class AnnotatedRoutesTest {
    private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(
                    DispatcherServletAutoConfiguration.class,
                    WebMvcAutoConfiguration.class,
                    IdempotencyAutoConfiguration.class));

    @RestController
    @RequestMapping("/v1/orders")
    @Idempotent(lease = "${orders.lease}", inFlight = Idempotent.InFlight.WAIT, maxWait = "2s")
    static class Orders {
        @PostMapping
        String create() {
            return "";
        }

        @PutMapping("/{id:[0-9]+}")
        @Idempotent(keyRequired = false, recordServerErrors = true)
        String replace(@PathVariable String id) {
            return id;
        }

        @PostMapping("/search")
        @Idempotent(retention = "1h")
        String search() {
            return "";
        }

        @PostMapping("/{id}/cancel")
        String cancel(@PathVariable String id) {
            return id;
        }

        @GetMapping("/{id}")
        String read(@PathVariable String id) {
            return id;
        }
    }

    @RestController
    static class Charges {
        @PostMapping("/v1/charges")
        @Idempotent
        String charge(String body) {
            return body;
        }
    }

    @RestController
    static class Mistakes {
        @PostMapping("/files/**")
        @Idempotent
        String upload() {
            return "";
        }

        @RequestMapping("/anything")
        @Idempotent
        String anything() {
            return "";
        }

        @PostMapping("/slow")
        @Idempotent(lease = "ten seconds")
        String slow() {
            return "";
        }

        @PostMapping("/short")
        @Idempotent(lease = "1m", retention = "30s")
        String shortRetention() {
            return "";
        }

        @PostMapping("/later")
        @Idempotent
        java.util.concurrent.CompletableFuture<String> later() {
            return java.util.concurrent.CompletableFuture.completedFuture("");
        }

        @PostMapping("/deferred")
        @Idempotent
        org.springframework.http.ResponseEntity<org.springframework.web.context.request.async.DeferredResult<String>>
                deferred() {
            return org.springframework.http.ResponseEntity.ok(
                    new org.springframework.web.context.request.async.DeferredResult<>());
        }

        @PostMapping("/events")
        @Idempotent
        org.springframework.web.servlet.mvc.method.annotation.SseEmitter events() {
            return new org.springframework.web.servlet.mvc.method.annotation.SseEmitter();
        }
    }

    @Test
    void aConfiguredPathOutsideTheServletPathIsWarnedAbout(org.springframework.boot.test.system.CapturedOutput output) {
        runner.withUserConfiguration(Charges.class)
                .withPropertyValues(
                        "spring.mvc.servlet.path=/api",
                        "exactly.idempotency.routes[0].path=/v1/refunds",
                        "exactly.idempotency.routes[0].method=POST",
                        "exactly.idempotency.routes[1].path=/api/v1/payouts",
                        "exactly.idempotency.routes[1].method=POST")
                .run(context -> assertThat(context).hasNotFailed());
        assertThat(output.getOut() + output.getErr())
                .contains("exactly.idempotency.routes[0] guards POST /v1/refunds, a path relative to the context, but "
                        + "Spring MVC is mapped under /api: its handlers are reached at /api/v1/refunds")
                .doesNotContain("guards POST /api/v1/payouts");
    }

    @Test
    void annotatedMethodsBecomeRoutesWithTheirSettingsUnderTheServletPath() {
        runner.withUserConfiguration(Orders.class)
                .withPropertyValues("orders.lease=3s", "spring.mvc.servlet.path=/api")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    List<IdempotentRoute> routes = routes(context.getBean(FilterRegistrationBean.class));
                    assertThat(routes)
                            .extracting(r -> r.method() + " " + r.pathTemplate())
                            .containsExactly(
                                    "POST /api/v1/orders",
                                    "POST /api/v1/orders/search",
                                    "PUT /api/v1/orders/{id}",
                                    "POST /api/v1/orders/{id}/cancel");
                    IdempotentRoute create = routes.get(0);
                    assertThat(create.policy().lease()).isEqualTo(Duration.ofSeconds(3));
                    assertThat(create.policy().inFlight()).isEqualTo(InFlightPolicy.waitUpTo(Duration.ofSeconds(2)));
                    assertThat(create.keyRequired()).isTrue();
                    IdempotentRoute search = routes.get(1);
                    assertThat(search.policy().retention()).isEqualTo(Duration.ofHours(1));
                    assertThat(search.policy().lease())
                            .as("the method's annotation replaces the class's")
                            .isEqualTo(Duration.ofSeconds(10));
                    IdempotentRoute replace = routes.get(2);
                    assertThat(replace.keyRequired()).isFalse();
                    assertThat(replace.recordServerErrors()).isTrue();
                    assertThat(routes.get(3).policy().lease())
                            .as("the class's annotation")
                            .isEqualTo(Duration.ofSeconds(3));
                });
    }

    @Test
    void aRouteAlsoConfiguredByAPropertyStopsTheStartupNamingBoth() {
        runner.withUserConfiguration(Charges.class)
                .withPropertyValues("exactly.idempotency.routes[0].path=/v1/charges")
                .run(context -> assertThat(problems(context))
                        .containsExactly(
                                "exactly.idempotency.routes[0] and @Idempotent on Charges.charge(String) guard the same route "
                                        + "(POST /v1/charges): keep one of them"));
        runner.withUserConfiguration(Charges.class)
                .withPropertyValues(
                        "exactly.idempotency.routes[0].path=/v1/charges", "exactly.idempotency.routes[0].method=PUT")
                .run(context -> assertThat(context).hasNotFailed());
    }

    @Test
    void everyMistakeOfTheAnnotationsIsReportedAtStartup() {
        runner.withUserConfiguration(Mistakes.class)
                .run(context -> assertThat(problems(context))
                        .containsExactlyInAnyOrder(
                                "@Idempotent on Mistakes.upload(): the path pattern /files/** has a wildcard or a partial variable "
                                        + "('**'); a guarded route is made of literal and {variable} segments",
                                "@Idempotent on Mistakes.anything(): its mapping names no HTTP method, so it would guard every method "
                                        + "(GET included); map it with @PostMapping, @PutMapping, ... or @RequestMapping(method = ...)",
                                "@Idempotent on Mistakes.slow(): lease = \"ten seconds\" is not a duration (write it as 500ms, 10s, 5m, 24h or 7d)",
                                "@Idempotent on Mistakes.shortRetention(): retention (30s) must be longer than the lease (1m): a finished "
                                        + "request is replayed for the retention, and only the lease may be short",
                                asynchronous("later()", "CompletableFuture"),
                                asynchronous("deferred()", "DeferredResult"),
                                asynchronous("events()", "SseEmitter")));
    }

    private static String asynchronous(String method, String type) {
        return "@Idempotent on Mistakes." + method + ": it returns " + type + ", an asynchronous result; on Spring MVC "
                + "a guarded route's response is captured when its handler returns, so the work would run and its "
                + "answer be lost (the key released, a retry running it again): return the result itself";
    }

    @Test
    void templatesKeepLiteralAndVariableSegments() {
        assertThat(AnnotatedRoutes.template("/v1/charges/{id:[0-9]{1,3}}/refunds"))
                .isEqualTo("/v1/charges/{id}/refunds");
        assertThat(AnnotatedRoutes.template("")).isEqualTo("/");
        assertThat(AnnotatedRoutes.template("v1/charges")).isEqualTo("/v1/charges");
        for (String wildcard : new String[] {"/v1/*", "/v1/{*rest}", "/v1/file.{ext}", "/v1/ch?rges"}) {
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> AnnotatedRoutes.template(wildcard))
                    .as(wildcard)
                    .isInstanceOf(IllegalArgumentException.class);
        }
    }

    private static List<IdempotentRoute> routes(FilterRegistrationBean<?> registration) {
        return ((IdempotencyFilter) registration.getFilter()).routes();
    }
}
