package dev.exactly.ledger;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class PointInTimeTest extends LedgerTestSupport {

    @Test
    void balancesAsOfATimeCountOnlyEarlierPostings() {
        Account cash = open("cash", AccountType.ASSET);
        Account wallet =
                open(AccountSpec.of("wallet", AccountType.LIABILITY, USD).withFloor(0));
        Account shop = open("shop", AccountType.REVENUE);

        Instant t1 = clock.advance(Duration.ofMinutes(1));
        ledger.post(transfer(cash, wallet, 5_000));
        Instant t2 = clock.advance(Duration.ofMinutes(1));
        ledger.post(transfer(wallet, shop, 1_200));
        Instant t3 = clock.advance(Duration.ofMinutes(1));
        ledger.post(transfer(wallet, shop, 300));
        ledger.post(transfer(cash, wallet, 1));

        assertThat(ledger.balance(wallet.id(), START)).isEqualTo(usd(0));
        assertThat(ledger.balance(wallet.id(), t1.minusNanos(1_000))).isEqualTo(usd(0));
        assertThat(ledger.balance(wallet.id(), t1)).isEqualTo(usd(5_000));
        assertThat(ledger.balance(wallet.id(), t2.minusSeconds(1))).isEqualTo(usd(5_000));
        assertThat(ledger.balance(wallet.id(), t2)).isEqualTo(usd(3_800));
        assertThat(ledger.balance(wallet.id(), t3)).isEqualTo(usd(3_501));
        assertThat(ledger.balance(shop.id(), t2)).isEqualTo(usd(1_200));
        assertThat(ledger.balance(cash.id(), t3)).isEqualTo(usd(5_001));

        // from the postings and from the balance rows, the present agrees
        for (Account a : new Account[] {cash, wallet, shop}) {
            assertThat(ledger.balance(a.id(), Instant.MAX)).isEqualTo(ledger.balance(a.id()));
        }
        TrialBalance past = ledger.trialBalance(t2);
        assertThat(past.isBalanced()).isTrue();
        assertThat(past.line(wallet.id()).orElseThrow().credit()).isEqualTo(usd(3_800));
        assertThat(past.line(cash.id()).orElseThrow().debit()).isEqualTo(usd(5_000));
        assertThat(ledger.trialBalance(t3).lines())
                .isEqualTo(ledger.trialBalance().lines());
    }

    @Test
    void aNegativeBalanceMovesToTheOtherColumn() {
        Account cash = open("cash", AccountType.ASSET);
        Account equity = open("equity", AccountType.EQUITY);
        ledger.post(transfer(equity, cash, 700)); // cash overdrawn: a credit balance on a debit-normal account
        TrialBalance trial = ledger.trialBalance();
        TrialBalance.Line line = trial.line(cash.id()).orElseThrow();
        assertThat(line.balance()).isEqualTo(usd(-700));
        assertThat(line.debit()).isEqualTo(usd(0));
        assertThat(line.credit()).isEqualTo(usd(700));
        assertThat(trial.line(equity.id()).orElseThrow().debit()).isEqualTo(usd(700));
        assertThat(trial.isBalanced()).isTrue();
    }
}
