package dev.exactly.idempotency.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.beans.factory.support.StaticListableBeanFactory;
import org.springframework.boot.reactor.netty.NettyReactiveWebServerFactory;

class ReactorNettyCheckTest {

    @ParameterizedTest
    @ValueSource(strings = {"1.3.0", "1.3.6", "1.3.7", "1.3.5-SNAPSHOT"})
    void aReactorNettyThatLeavesKeepAliveRequestsUnansweredIsNamedWithTheVersionToUse(String version) {
        assertThat(ReactorNettyCheck.warning(version))
                .startsWith("Reactor Netty " + version + " can leave a request")
                .contains("1.3.8", "Netty 4.2.18", "netty.version");
    }

    @ParameterizedTest
    @ValueSource(strings = {"1.3.8", "1.3.10", "1.3.8-SNAPSHOT", "1.4.0", "2.0.0", "1.2.15", "1.3", "1.3.x", ""})
    void anyOtherVersionIsLeftAlone(String version) {
        assertThat(ReactorNettyCheck.warning(version)).isNull();
        assertThat(ReactorNettyCheck.warning(null)).isNull();
    }

    @Test
    void theVersionIsReadFromTheJarOnTheClassPath() throws Exception {
        // the starter's tests run on the Reactor Netty Spring Boot manages, whose directory names its version
        Path jar = Path.of(Class.forName(ReactorNettyCheck.SERVER_CLASS)
                .getProtectionDomain()
                .getCodeSource()
                .getLocation()
                .toURI());
        String version = ReactorNettyCheck.version(getClass().getClassLoader());
        assertThat(version).isEqualTo(jar.getParent().getFileName().toString());
        try (URLClassLoader none = new URLClassLoader(new URL[0], null)) {
            assertThat(ReactorNettyCheck.version(none))
                    .as("no Reactor Netty: nothing to say")
                    .isNull();
        }
    }

    @Test
    void onlyAnApplicationServingOnReactorNettyIsConcerned() {
        ClassLoader loader = getClass().getClassLoader();
        StaticListableBeanFactory none = new StaticListableBeanFactory();
        assertThat(ReactorNettyCheck.servesOnNetty(none, loader))
                .as("a reactive application on another server, Reactor Netty there for its WebClient")
                .isFalse();
        StaticListableBeanFactory netty = new StaticListableBeanFactory();
        netty.addBean("nettyReactiveWebServerFactory", new NettyReactiveWebServerFactory());
        assertThat(ReactorNettyCheck.servesOnNetty(netty, loader)).isTrue();
        try (URLClassLoader withoutBoot = new URLClassLoader(new URL[0], null)) {
            assertThat(ReactorNettyCheck.servesOnNetty(netty, withoutBoot)).isFalse();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
