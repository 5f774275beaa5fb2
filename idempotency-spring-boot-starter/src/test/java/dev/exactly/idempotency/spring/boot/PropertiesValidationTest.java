package dev.exactly.idempotency.spring.boot;

import static dev.exactly.idempotency.spring.boot.StartupFailures.problems;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.exactly.idempotency.spring.boot.app.TestApplication;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.core.io.support.SpringFactoriesLoader;

/** A bad configuration fails the startup, with a message naming each property at fault. */
class PropertiesValidationTest {
    private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class))
            .withPropertyValues("exactly.idempotency.routes[0].path=/v1/charges");

    @Test
    void retentionNotLongerThanTheLeaseFailsTheStartup() {
        runner.withPropertyValues("exactly.idempotency.lease=1m", "exactly.idempotency.retention=30s")
                .run(context -> assertThat(problems(context))
                        .containsExactly(
                                "exactly.idempotency.retention (30s) must be longer than the lease (1m): a finished request "
                                        + "is replayed for the retention, and only the lease may be short"));
        runner.withPropertyValues("exactly.idempotency.routes[0].retention=5s")
                .run(context -> assertThat(problems(context))
                        .singleElement()
                        .asString()
                        .startsWith("exactly.idempotency.routes[0].retention (5s) must be longer"));
    }

    @Test
    void aKeepAliveMaxHoldShorterThanTheLeaseFailsTheStartup() {
        runner.withPropertyValues("exactly.idempotency.lease=10m")
                .run(
                        context -> assertThat(problems(context))
                                .containsExactly(
                                        "exactly.idempotency.keep-alive.max-hold (5m) must be at least the lease (10m): the keep-alive "
                                                + "holds a key for at most max-hold; raise it, or set exactly.idempotency.keep-alive.enabled=false"));
        runner.withPropertyValues("exactly.idempotency.routes[0].lease=10m")
                .run(
                        context -> assertThat(problems(context))
                                .singleElement()
                                .asString()
                                .startsWith(
                                        "exactly.idempotency.routes[0].keep-alive.max-hold (5m) must be at least the lease (10m)"));
        runner.withPropertyValues("exactly.idempotency.keep-alive.max-hold=0s")
                .run(context -> assertThat(problems(context))
                        .containsExactly("exactly.idempotency.keep-alive.max-hold must be at least 1ms (was 0s)"));
    }

    @Test
    void keepAliveSettingsOfARouteOverrideTheTopLevel() {
        runner.withPropertyValues(
                        "exactly.idempotency.keep-alive.max-hold=2m",
                        "exactly.idempotency.routes[1].path=/v1/slow",
                        "exactly.idempotency.routes[1].lease=10m",
                        "exactly.idempotency.routes[1].keep-alive.enabled=false",
                        "exactly.idempotency.routes[2].path=/v1/reports",
                        "exactly.idempotency.routes[2].keep-alive.max-hold=30m")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    IdempotencyProperties properties = context.getBean(IdempotencyProperties.class);
                    var routes = PropertiesReader.routes(properties);
                    assertThat(routes.get(0).policy().keepAlive())
                            .isEqualTo(dev.exactly.idempotency.KeepAlive.upTo(java.time.Duration.ofMinutes(2)));
                    assertThat(routes.get(1).policy().keepAlive().enabled()).isFalse();
                    assertThat(routes.get(2).policy().keepAlive())
                            .isEqualTo(dev.exactly.idempotency.KeepAlive.upTo(java.time.Duration.ofMinutes(30)));
                });
    }

    @Test
    void anUnknownStoreTypeFailsTheStartupNamingThePropertyAndTheValue() {
        runner.withPropertyValues("exactly.idempotency.store=mongo").run(context -> {
            assertThat(context).hasFailed();
            assertThat(messages(context.getStartupFailure()))
                    .anySatisfy(m -> assertThat(m).contains("exactly.idempotency.store"))
                    .anySatisfy(m -> assertThat(m).contains("mongo"));
        });
    }

    @Test
    void aRedisStoreWithoutUriFailsTheStartup() {
        // without Spring Boot's Redis support there is nothing else to connect to
        runner.withClassLoader(new FilteredClassLoader("org.springframework.boot.data.redis"))
                .withPropertyValues("exactly.idempotency.store=redis")
                .run(
                        context -> assertThat(problems(context))
                                .singleElement()
                                .asString()
                                .startsWith("exactly.idempotency.store=redis needs exactly.idempotency.redis.uri")
                                .contains(
                                        "or Spring Boot's Redis connection: add "
                                                + "org.springframework.boot:spring-boot-starter-data-redis and set spring.data.redis.*"));
        // with it, but without its connection details (its auto-configuration did not run)
        runner.withPropertyValues("exactly.idempotency.store=redis")
                .run(context -> assertThat(problems(context))
                        .singleElement()
                        .asString()
                        .startsWith("exactly.idempotency.store=redis without exactly.idempotency.redis.uri uses "
                                + "Spring Boot's Redis connection, and there is none: set spring.data.redis.host"));
        runner.withPropertyValues("exactly.idempotency.store=redis", "exactly.idempotency.redis.uri=http://nope")
                .run(context -> assertThat(problems(context))
                        .singleElement()
                        .asString()
                        .startsWith("exactly.idempotency.redis.uri is not a Redis connection string"));
        runner.withPropertyValues(
                        "exactly.idempotency.store=redis",
                        "exactly.idempotency.redis.uri=redis://h:1",
                        "exactly.idempotency.redis.key-prefix=a{b}")
                .run(context -> assertThat(problems(context))
                        .singleElement()
                        .asString()
                        .startsWith("exactly.idempotency.redis: keyPrefix must be"));
    }

    @Test
    void aPostgresStoreWithoutDataSourceFailsTheStartup() {
        runner.withPropertyValues("exactly.idempotency.store=postgres")
                .run(context -> assertThat(problems(context))
                        .singleElement()
                        .asString()
                        .startsWith("exactly.idempotency.store=postgres needs one DataSource bean"));
        runner.withPropertyValues(
                        "exactly.idempotency.store=postgres",
                        "exactly.idempotency.postgres.table-name=Bad-Name",
                        "exactly.idempotency.postgres.statement-timeout=1500ms")
                .run(context -> assertThat(problems(context))
                        .singleElement()
                        .asString()
                        .startsWith("exactly.idempotency.postgres: "));
    }

    @Test
    void routesMustBeValidTemplatesWithBoundedWaitsAndNoRepeats() {
        runner.withPropertyValues(
                        "exactly.idempotency.routes[1].path=v1/refunds",
                        "exactly.idempotency.routes[2].path=/v1/transfers",
                        "exactly.idempotency.routes[2].in-flight.policy=wait",
                        "exactly.idempotency.routes[2].in-flight.max-wait=2m",
                        "exactly.idempotency.routes[3].method=POST",
                        "exactly.idempotency.routes[3].path=/v1/charges",
                        "exactly.idempotency.routes[4].method=GET")
                .run(
                        context -> assertThat(problems(context))
                                .containsExactly(
                                        "exactly.idempotency.routes[1] (POST v1/refunds): a path template starts with '/': v1/refunds",
                                        "exactly.idempotency.routes[2].in-flight.max-wait must be more than 0 and at most 1m (was 2m)",
                                        "exactly.idempotency.routes[3] repeats exactly.idempotency.routes[0] (POST /v1/charges)",
                                        "exactly.idempotency.routes[4].path is required (a path template such as /v1/charges)"));
    }

    @Test
    void tenantModesNeedTheirSettingsAndSettingsNeedTheirMode() {
        runner.withPropertyValues("exactly.idempotency.tenant.mode=api-keys")
                .run(context -> assertThat(problems(context))
                        .singleElement()
                        .asString()
                        .startsWith("exactly.idempotency.tenant.api-keys must map at least one API key"));
        runner.withPropertyValues("exactly.idempotency.tenant.mode=trusted-header")
                .run(context -> assertThat(problems(context))
                        .singleElement()
                        .asString()
                        .startsWith("exactly.idempotency.tenant.header must name the header"));
        runner.withPropertyValues(
                        "exactly.idempotency.tenant.api-keys[k1]=acme", "exactly.idempotency.tenant.header=X-Tenant")
                .run(context -> assertThat(problems(context))
                        .containsExactly(
                                "exactly.idempotency.tenant.api-keys is set but exactly.idempotency.tenant.mode is principal: "
                                        + "set exactly.idempotency.tenant.mode=api-keys to use them",
                                "exactly.idempotency.tenant.header is set but exactly.idempotency.tenant.mode is principal: "
                                        + "set exactly.idempotency.tenant.mode=trusted-header (only behind a gateway that "
                                        + "overwrites the header)"));
    }

    @Test
    void capsAndHeadersAreChecked() {
        runner.withPropertyValues(
                        "exactly.idempotency.max-request-body-size=0",
                        "exactly.idempotency.max-stored-response-size=100B",
                        "exactly.idempotency.replay-headers=X-Ok,Bad Header",
                        "exactly.idempotency.poll-interval=0s",
                        "exactly.idempotency.memory.max-entries=0")
                .run(context -> assertThat(problems(context))
                        .containsExactly(
                                "exactly.idempotency.poll-interval must be positive (was 0s)",
                                "exactly.idempotency.max-request-body-size must be between 1B and 2147483647B (was 0B)",
                                "exactly.idempotency.max-stored-response-size must be between 1024B and 2147483647B (was 100B)",
                                "exactly.idempotency.replay-headers: not a header name: 'Bad Header'",
                                "exactly.idempotency.memory.max-entries must be positive (was 0)"));
    }

    @Test
    void everyProblemIsReportedAtOnceAndTheFailureAnalyzerExplainsThem() {
        InvalidIdempotencyPropertiesException failure = new InvalidIdempotencyPropertiesException(
                List.of("exactly.idempotency.a is wrong", "exactly.idempotency.b is wrong"));
        assertThat(failure.getMessage()).isEqualTo("""
                Invalid exactly.idempotency configuration:
                 - exactly.idempotency.a is wrong
                 - exactly.idempotency.b is wrong""");
        // registered for Spring Boot's startup failure report (other analyzers need arguments: skipped)
        List<FailureAnalyzer> analyzers = SpringFactoriesLoader.forDefaultResourceLocation(
                        getClass().getClassLoader())
                .load(FailureAnalyzer.class, null, (type, name, error) -> {});
        FailureAnalyzer ours = analyzers.stream()
                .filter(a -> a instanceof InvalidIdempotencyPropertiesFailureAnalyzer)
                .findFirst()
                .orElseThrow();
        FailureAnalysis analysis = ours.analyze(new IllegalStateException("context failed", failure));
        assertThat(analysis.getDescription()).isEqualTo(failure.getMessage());
        assertThat(analysis.getAction()).contains("exactly.idempotency.*");
    }

    @Test
    @ExtendWith(OutputCaptureExtension.class)
    void aRealApplicationDoesNotStartAndSaysWhy(CapturedOutput output) {
        SpringApplication application = new SpringApplication(TestApplication.class);
        assertThatThrownBy(() -> application.run(
                        "--server.port=0", "--exactly.idempotency.lease=1m", "--exactly.idempotency.retention=30s"))
                .hasRootCauseInstanceOf(InvalidIdempotencyPropertiesException.class);
        assertThat(output.getOut() + output.getErr())
                .contains("APPLICATION FAILED TO START")
                .contains("exactly.idempotency.retention (30s) must be longer than the lease (1m)")
                .contains("Fix what is listed above: each line names the exactly.idempotency.* property at fault");
    }

    private static List<String> messages(Throwable failure) {
        List<String> messages = new ArrayList<>();
        for (Throwable t = failure; t != null; t = t.getCause()) {
            messages.add(String.valueOf(t.getMessage()));
        }
        return messages;
    }
}
