package dev.once.architecture;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What the architecture rules need from one class file (JVMS §4), read without loading the class:
 * its name and access, every class it refers to, and the descriptors of its public and protected
 * members, which is where an internal type would leak into the API.
 */
record ClassFile(String name, boolean isPublic, Set<String> references, Set<String> exposed) {

  private static final int ACC_PUBLIC = 0x0001;
  private static final int ACC_PROTECTED = 0x0004;
  private static final int ACC_SYNTHETIC = 0x1000;

  /** A class name as it stands in descriptors and signatures: {@code Ldev/once/store/RecordId;}. */
  private static final Pattern DESCRIBED = Pattern.compile("L([\\w/$]+)[;<]");

  String packageName() {
    int slash = name.lastIndexOf('/');
    return slash < 0 ? "" : name.substring(0, slash).replace('/', '.');
  }

  static ClassFile parse(byte[] bytes) throws IOException {
    DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes));
    if (in.readInt() != 0xCAFEBABE) {
      throw new IOException("not a class file");
    }
    in.readUnsignedShort();
    in.readUnsignedShort();
    int count = in.readUnsignedShort();
    String[] utf8 = new String[count];
    int[] classIndex = new int[count];
    List<Integer> classEntries = new ArrayList<>();
    for (int i = 1; i < count; i++) {
      int tag = in.readUnsignedByte();
      switch (tag) {
        case 1 -> utf8[i] = in.readUTF();
        case 7 -> {
          classIndex[i] = in.readUnsignedShort();
          classEntries.add(i);
        }
        case 8, 16, 19, 20 -> in.readUnsignedShort();
        case 3, 4, 9, 10, 11, 12, 17, 18 -> in.readInt();
        case 5, 6 -> {
          in.readLong();
          i++;
        }
        case 15 -> {
          in.readUnsignedByte();
          in.readUnsignedShort();
        }
        default -> throw new IOException("unknown constant pool tag " + tag);
      }
    }
    int access = in.readUnsignedShort();
    String name = utf8[classIndex[in.readUnsignedShort()]];

    // Every class the file names: class entries, and the types inside descriptors and signatures.
    Set<String> references = new TreeSet<>();
    for (int i : classEntries) {
      String ref = utf8[classIndex[i]];
      if (!ref.startsWith("[")) {
        references.add(ref);
      }
    }
    // Array class entries and all descriptors: their element types are found here.
    for (String s : utf8) {
      if (s != null) {
        addDescribed(s, references);
      }
    }
    references.remove(name);

    Set<String> exposed = new TreeSet<>();
    int superIndex = in.readUnsignedShort();
    if (superIndex != 0) {
      exposed.add(utf8[classIndex[superIndex]]);
    }
    int interfaces = in.readUnsignedShort();
    for (int i = 0; i < interfaces; i++) {
      exposed.add(utf8[classIndex[in.readUnsignedShort()]]);
    }
    for (int kind = 0; kind < 2; kind++) { // fields, then methods
      int members = in.readUnsignedShort();
      for (int m = 0; m < members; m++) {
        int flags = in.readUnsignedShort();
        in.readUnsignedShort();
        String descriptor = utf8[in.readUnsignedShort()];
        boolean visible =
            (flags & (ACC_PUBLIC | ACC_PROTECTED)) != 0 && (flags & ACC_SYNTHETIC) == 0;
        int attributes = in.readUnsignedShort();
        for (int a = 0; a < attributes; a++) {
          String attribute = utf8[in.readUnsignedShort()];
          int length = in.readInt();
          if (visible && "Signature".equals(attribute)) {
            addDescribed(utf8[in.readUnsignedShort()], exposed);
          } else {
            in.skipNBytes(length);
          }
        }
        if (visible) {
          addDescribed(descriptor, exposed);
        }
      }
    }
    return new ClassFile(name, (access & ACC_PUBLIC) != 0, references, exposed);
  }

  private static void addDescribed(String text, Set<String> into) {
    Matcher m = DESCRIBED.matcher(text);
    while (m.find()) {
      into.add(m.group(1));
    }
  }
}
