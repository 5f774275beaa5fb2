package dev.exactly.ledger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.exactly.ledger.LedgerValidationException.Reason;
import java.math.BigDecimal;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class MoneyTest {

    private static void assertRefused(ThrowingCallable call, Reason reason) {
        assertThatThrownBy(call).isInstanceOfSatisfying(LedgerValidationException.class, e -> {
            assertThat(e.reason()).isEqualTo(reason);
            assertThat(e.code()).isEqualTo(reason.code());
        });
    }

    @ParameterizedTest
    @CsvSource({
        "USD, 2", "EUR, 2", "GBP, 2", "CHF, 2", "CAD, 2", "AUD, 2", "SEK, 2", "JPY, 0", "KRW, 0", "KWD, 3", "BHD, 3",
        "CLF, 4"
    })
    void currenciesCarryTheirIsoExponent(String code, int exponent) {
        assertThat(Currency.of(code).exponent()).isEqualTo(exponent);
        assertThat(Currency.of(code.toLowerCase(java.util.Locale.ROOT))).isEqualTo(Currency.of(code));
    }

    @Test
    void theTableIsReasonablyComplete() {
        assertThat(Currency.table()).hasSizeGreaterThan(150).containsKeys("USD", "EUR", "JPY", "KWD", "BHD");
    }

    @ParameterizedTest
    @ValueSource(strings = {"XYZ", "US", "USDX", "", "XAU", "12$"})
    void unknownCurrenciesAreTypedRefusals(String code) {
        assertRefused(() -> Currency.of(code), Reason.UNKNOWN_CURRENCY);
        assertRefused(() -> Money.parse("1", code), Reason.UNKNOWN_CURRENCY);
        assertThat(Currency.isKnown(code)).isFalse();
    }

    @Test
    void aCurrencyCannotBeBuiltWithAWrongExponent() {
        assertRefused(() -> new Currency("JPY", 2), Reason.UNKNOWN_CURRENCY);
        assertRefused(() -> new Currency("QQQ", 2), Reason.UNKNOWN_CURRENCY);
    }

    @ParameterizedTest
    @CsvSource({
        "12.34, USD, 1234",
        "12, USD, 1200",
        "0.5, USD, 50",
        "12.300, USD, 1230",
        "-7.01, EUR, -701",
        "+3, GBP, 300",
        "1500, JPY, 1500",
        "1.234, KWD, 1234",
        "0.001, BHD, 1",
        "92233720368547758.07, USD, 9223372036854775807"
    })
    void parsesDecimalsIntoMinorUnits(String amount, String currency, long minorUnits) {
        Money money = Money.parse(amount, currency);
        assertThat(money.minorUnits()).isEqualTo(minorUnits);
        assertThat(money.currency()).isEqualTo(Currency.of(currency));
        assertThat(money.toDecimal()).isEqualByComparingTo(new BigDecimal(amount));
    }

    @ParameterizedTest
    @CsvSource({"12.345, USD", "1.5, JPY", "0.0001, KWD", "0.001, EUR"})
    void tooManyDecimalsAreRefusedNotRounded(String amount, String currency) {
        assertRefused(() -> Money.parse(amount, currency), Reason.INVALID_AMOUNT);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "abc", "1e3", "1,00", " 1", "1.", ".5", "NaN", "Infinity", "--1", "0x10"})
    void malformedAmountsAreRefused(String amount) {
        assertRefused(() -> Money.parse(amount, "USD"), Reason.INVALID_AMOUNT);
    }

    @Test
    void amountsBeyondALongAreRefused() {
        assertRefused(() -> Money.parse("92233720368547758.08", "USD"), Reason.AMOUNT_OVERFLOW);
        assertRefused(() -> Money.parse("-92233720368547758.09", "USD"), Reason.AMOUNT_OVERFLOW);
    }

    @Test
    void arithmeticIsExactAndOverflowIsATypedRefusal() {
        Money max = Money.of(Long.MAX_VALUE, "USD");
        Money min = Money.of(Long.MIN_VALUE, "USD");
        assertThat(Money.of(10, "USD").plus(Money.of(5, "USD"))).isEqualTo(Money.of(15, "USD"));
        assertThat(Money.of(10, "USD").minus(Money.of(15, "USD"))).isEqualTo(Money.of(-5, "USD"));
        assertThat(max.minus(max)).isEqualTo(Money.zero(Currency.of("USD")));
        assertRefused(() -> max.plus(Money.of(1, "USD")), Reason.AMOUNT_OVERFLOW);
        assertRefused(() -> min.minus(Money.of(1, "USD")), Reason.AMOUNT_OVERFLOW);
        assertRefused(min::negate, Reason.AMOUNT_OVERFLOW);
    }

    @Test
    void differentCurrenciesDoNotMix() {
        assertRefused(() -> Money.of(1, "USD").plus(Money.of(1, "EUR")), Reason.CURRENCY_MISMATCH);
        assertRefused(() -> Money.of(1, "USD").compareTo(Money.of(1, "EUR")), Reason.CURRENCY_MISMATCH);
    }

    @Test
    void printsWithTheCurrencysDecimals() {
        assertThat(Money.of(1234, "USD")).hasToString("12.34 USD");
        assertThat(Money.of(-5, "USD")).hasToString("-0.05 USD");
        assertThat(Money.of(1500, "JPY")).hasToString("1500 JPY");
        assertThat(Money.of(1, "KWD")).hasToString("0.001 KWD");
    }

    @Test
    void postingAmountsMustBePositive() {
        assertRefused(() -> PostingRequest.debit(1, Money.of(0, "USD")), Reason.INVALID_AMOUNT);
        assertRefused(() -> PostingRequest.credit(1, Money.of(-100, "USD")), Reason.INVALID_AMOUNT);
    }

    @Test
    void floorsAndShardsAreValidated() {
        Currency usd = Currency.of("USD");
        assertRefused(() -> AccountSpec.of("a", AccountType.ASSET, usd).withFloor(1), Reason.INVALID_ACCOUNT);
        assertRefused(
                () -> AccountSpec.of("a", AccountType.ASSET, usd).withShards(4).withFloor(0), Reason.INVALID_ACCOUNT);
        assertRefused(() -> AccountSpec.of("a", AccountType.ASSET, usd).withShards(0), Reason.INVALID_ACCOUNT);
        assertRefused(() -> AccountSpec.of("", AccountType.ASSET, usd), Reason.INVALID_ACCOUNT);
        assertRefused(
                () -> AccountSpec.of("a", AccountType.ASSET, usd).withFloor(Money.of(-1, "EUR")),
                Reason.CURRENCY_MISMATCH);
        assertThat(AccountSpec.of("a", AccountType.LIABILITY, usd).normalBalance())
                .isEqualTo(Side.CREDIT);
        assertThat(AccountSpec.of("a", AccountType.EXPENSE, usd).normalBalance())
                .isEqualTo(Side.DEBIT);
    }
}
