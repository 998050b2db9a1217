package dev.once.store.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * One of the store's Lua scripts: its source (the shared prelude followed by the script's own file
 * under {@code dev/once/store/redis/}) and the SHA-1 digest {@code EVALSHA} names it by.
 */
final class LuaScript {

  static final LuaScript CLAIM = load("claim");
  static final LuaScript CLAIM_MANY = load("claim_many");
  static final LuaScript GET = load("get");
  static final LuaScript HEARTBEAT = load("heartbeat");
  static final LuaScript HEARTBEAT_MANY = load("heartbeat_many");
  static final LuaScript FINISH = load("finish");
  static final LuaScript FINISH_MANY = load("finish_many");
  static final LuaScript RELEASE = load("release");
  static final LuaScript END_LEASE = load("end_lease");
  static final LuaScript PURGE = load("purge");
  static final LuaScript WATCH = load("watch");
  static final LuaScript IN_FLIGHT = load("in_flight");

  static final LuaScript[] ALL = {
    CLAIM,
    CLAIM_MANY,
    GET,
    HEARTBEAT,
    HEARTBEAT_MANY,
    FINISH,
    FINISH_MANY,
    RELEASE,
    END_LEASE,
    PURGE,
    WATCH,
    IN_FLIGHT
  };

  private final String name;
  private final byte[] source;
  private final String sha;

  private LuaScript(String name, byte[] source) {
    this.name = name;
    this.source = source;
    this.sha = sha1Hex(source);
  }

  String name() {
    return name;
  }

  byte[] source() {
    return source;
  }

  String sha() {
    return sha;
  }

  @Override
  public String toString() {
    return name + ".lua (" + sha + ")";
  }

  private static LuaScript load(String name) {
    String source = resource("prelude") + "\n" + resource(name);
    return new LuaScript(name, source.getBytes(StandardCharsets.UTF_8));
  }

  private static String resource(String name) {
    String path = name + ".lua";
    try (InputStream in = LuaScript.class.getResourceAsStream(path)) {
      if (in == null) {
        throw new IllegalStateException("missing script resource dev/once/store/redis/" + path);
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read script resource " + path, e);
    }
  }

  private static String sha1Hex(byte[] bytes) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1").digest(bytes));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-1 is required of every Java platform", e);
    }
  }
}
