package dev.exactly.idempotency.spring.boot;

import static dev.exactly.idempotency.spring.boot.StartupFailures.problems;
import static org.assertj.core.api.Assertions.assertThat;

import dev.exactly.idempotency.servlet.IdempotencyFilter;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.web.servlet.FilterRegistrationBean;

/** The key's header and its aliases come from exactly.idempotency.key-header(-aliases), checked at startup. */
class KeyHeaderPropertiesTest {
    private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class))
            .withPropertyValues("exactly.idempotency.routes[0].path=/v1/charges");

    @Test
    void theHeaderAndItsAliasesAreConfigurable() {
        runner.run(context -> {
            IdempotencyFilter filter = (IdempotencyFilter)
                    context.getBean(FilterRegistrationBean.class).getFilter();
            assertThat(filter.keyHeader()).isEqualTo("Idempotency-Key");
            assertThat(filter.keyHeaderAliases()).containsExactly("X-Idempotency-Key");
        });
        runner.withPropertyValues(
                        "exactly.idempotency.key-header=Request-Key",
                        "exactly.idempotency.key-header-aliases=X-Request-Key,Idempotency-Key")
                .run(context -> {
                    IdempotencyFilter filter = (IdempotencyFilter)
                            context.getBean(FilterRegistrationBean.class).getFilter();
                    assertThat(filter.keyHeader()).isEqualTo("Request-Key");
                    assertThat(filter.keyHeaderAliases()).containsExactly("X-Request-Key", "Idempotency-Key");
                });
        runner.withPropertyValues("exactly.idempotency.key-header-aliases=")
                .run(context -> assertThat(((IdempotencyFilter) context.getBean(FilterRegistrationBean.class)
                                        .getFilter())
                                .keyHeaderAliases())
                        .isEmpty());
    }

    @Test
    void badHeaderNamesStopTheStartup() {
        runner.withPropertyValues(
                        "exactly.idempotency.key-header=Request Key",
                        "exactly.idempotency.key-header-aliases=bad alias,X-Ok")
                .run(context -> assertThat(problems(context))
                        .containsExactly(
                                "exactly.idempotency.key-header: not a header name: 'Request Key'",
                                "exactly.idempotency.key-header-aliases: not a header name: 'bad alias'"));
        runner.withPropertyValues("exactly.idempotency.key-header-aliases=idempotency-key")
                .run(context -> assertThat(problems(context))
                        .containsExactly(
                                "exactly.idempotency.key-header-aliases repeats the key header Idempotency-Key"));
    }
}
