package dev.exactly.payments.webhooks;

import static org.assertj.core.api.Assertions.assertThat;

import dev.exactly.payments.json.FieldError;
import dev.exactly.payments.json.Parsed;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A webhook URL whose host names a non-public address by itself (an IP address, {@code localhost}) is refused
 * when the endpoint is created, unless private networks are allowed: every delivery to it would be refused. A
 * host written as a number is an IPv4 address in dotted-decimal form or refused, whatever the setting. No case
 * here resolves a name: what a name resolves to is judged at each delivery attempt.
 */
class EndpointRequestTest {
    private static Parsed<EndpointRequest> parse(String url, boolean allowPrivateNetworks) {
        String body = "{\"url\":\"" + url + "\"}";
        return EndpointRequest.parse(body.getBytes(StandardCharsets.UTF_8), allowPrivateNetworks);
    }

    private static FieldError onlyError(Parsed<EndpointRequest> parsed) {
        assertThat(parsed).isInstanceOf(Parsed.Invalid.class);
        var errors = ((Parsed.Invalid<EndpointRequest>) parsed).errors();
        assertThat(errors).hasSize(1);
        assertThat(errors.get(0).field()).isEqualTo("url");
        return errors.get(0);
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "http://127.0.0.1:8080/hook          | 127.0.0.1, a loopback address",
                "https://10.1.2.3/hook               | 10.1.2.3, a private address",
                "https://172.16.0.1/hook             | 172.16.0.1, a private address",
                "https://192.168.1.20/hook           | 192.168.1.20, a private address",
                "http://169.254.169.254/latest       | 169.254.169.254, a link-local address",
                "https://100.64.0.1/                 | 100.64.0.1, a shared (carrier-grade NAT) address",
                "https://0.0.0.0/                    | 0.0.0.0, an unspecified address",
                "https://255.255.255.255/            | 255.255.255.255, a reserved (240/4) or broadcast address",
                "https://224.0.0.1/                  | 224.0.0.1, a multicast address",
                "https://[::1]/hook                  | 0:0:0:0:0:0:0:1, a loopback address",
                "https://[::ffff:127.0.0.1]/hook     | 127.0.0.1, a loopback address",
                "https://[::FFFF:A9FE:A9FE]/hook     | 169.254.169.254, a link-local address",
                "https://[64:ff9b::a9fe:a9fe]/hook   | 64:ff9b:0:0:0:0:a9fe:a9fe, a link-local (inside an IPv6 address) address",
                "https://[fe80::1%25eth0]/hook       | fe80:0:0:0:0:0:0:1, a link-local address",
                "https://[fd00::5]/hook              | fd00:0:0:0:0:0:0:5, a private (unique local) address",
                "http://localhost:9000/hook          | localhost, a loopback name",
                "http://LOCALHOST./hook              | LOCALHOST., a loopback name",
                "https://hooks.localhost/            | hooks.localhost, a loopback name",
            })
    void aHostThatIsANonPublicAddressByItselfIsRefusedAtCreation(String url, String named) {
        FieldError error = onlyError(parse(url, false));
        assertThat(error.code()).isEqualTo("url_not_public");
        assertThat(error.message())
                .isEqualTo("url's host is " + named + ": webhooks are delivered to public addresses only");

        Parsed<EndpointRequest> allowed = parse(url, true);
        assertThat(allowed).as("with private networks allowed").isInstanceOf(Parsed.Valid.class);
        assertThat(((Parsed.Valid<EndpointRequest>) allowed).value().url()).isEqualTo(url);
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "https://hooks.example.com/exactly",
                "https://93.184.215.14/hook",
                "https://8.8.8.8:8443/hook",
                "https://[2606:4700:4700::1111]/hook",
                "https://localhost.example.com/hook", // a name under another domain, not localhost's
                "https://mylocalhost/hook",
                "https://internal.corp/hook", // may resolve to a private address: judged at each delivery attempt
            })
    void aPublicAddressOrANameIsKept(String url) {
        Parsed<EndpointRequest> parsed = parse(url, false);
        assertThat(parsed).as(url).isInstanceOf(Parsed.Valid.class);
        assertThat(((Parsed.Valid<EndpointRequest>) parsed).value().url()).isEqualTo(url);
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "http://2130706433/hook", // 127.0.0.1 to the JDK's resolver, a name to others
                "http://0177.0.0.1/hook", // octal 127.0.0.1 to some, 177.0.0.1 to others
                "http://01.02.03.04/hook",
                "http://0x7f000001/hook", // a name to the JDK, 127.0.0.1 to the C library's resolver
            })
    void aNumericHostNotInDottedDecimalFormIsRefusedWhateverTheSetting(String url) {
        for (boolean allowPrivateNetworks : new boolean[] {false, true}) {
            FieldError error = onlyError(parse(url, allowPrivateNetworks));
            assertThat(error.code()).isEqualTo("url_invalid");
            assertThat(error.message()).startsWith("url's host is a number but not an IPv4 address in dotted-decimal");
        }
    }
}
