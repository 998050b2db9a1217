package dev.once.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The one spelling of a key the upstream is sent, whichever the client used. */
class KeySpellingTest {

  @Test
  void theQuotedAndTheBareSpellingOfAKeyGoUpstreamBare() {
    assertThat(UpstreamFields.canonical("\"pay-42\"")).isEqualTo("pay-42");
    assertThat(UpstreamFields.canonical("pay-42")).isEqualTo("pay-42");
    assertThat(UpstreamFields.canonical(" \"pay-42\"\t")).isEqualTo("pay-42");
  }

  @Test
  void aKeyThatStartsWithAQuoteGoesUpstreamAsTheSfStringThatCarriesIt() {
    String sent = "\"\\\"pay\\\\42\"";

    assertThat(UpstreamFields.canonical(sent)).isEqualTo(sent);
  }

  @Test
  void aValueThatIsNoKeyGoesOnAsItCame() {
    assertThat(UpstreamFields.canonical("\"unterminated")).isEqualTo("\"unterminated");
  }
}
