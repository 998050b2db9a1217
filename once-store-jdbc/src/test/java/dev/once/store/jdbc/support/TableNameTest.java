package dev.once.store.jdbc.support;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class TableNameTest {

  @ParameterizedTest
  @ValueSource(
      strings = {
        "once_records",
        "_t",
        "T1",
        "public.once_records",
        "s_1.t_2",
        "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuv"
      })
  void plainAndSchemaQualifiedIdentifiersAreAccepted(String name) {
    assertThat(TableName.parse(name).qualified()).isEqualTo(name);
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "",
        " ",
        "1abc",
        "once records",
        "t;DROP TABLE users",
        "t--",
        "t/*x*/",
        "\"t\"",
        "`t`",
        "t'",
        "a.b.c",
        ".t",
        "t.",
        "s..t",
        "t\u0000",
        "t\n",
        "tät",
        "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvw",
        "once_records WHERE 1=1",
        "x); DELETE FROM once_records; --"
      })
  void anythingElseIsRejectedNamingTheOptionAndTheValue(String name) {
    assertThatThrownBy(() -> TableName.parse(name))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("tableName")
        .hasMessageContaining(name);
  }

  @Test
  void nullIsRejected() {
    assertThatThrownBy(() -> TableName.parse(null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("tableName");
  }
}
