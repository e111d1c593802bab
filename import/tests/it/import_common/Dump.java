// Builds an object graph (an inheritance chain, weak, soft and phantom
// references, objects with finalizers, object arrays with nulls, statics,
// cycles, garbage) and dumps its own heap to args[0] with
// HotSpotDiagnosticMXBean.dumpHeap(file, false).
import com.sun.management.HotSpotDiagnosticMXBean;
import java.lang.management.ManagementFactory;
import java.lang.ref.PhantomReference;
import java.lang.ref.ReferenceQueue;
import java.lang.ref.SoftReference;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;

public class Dump {
    static class Base { Object baseRef; int x; }
    static class Mid extends Base { Object midRef; long y; }
    static class Leaf extends Mid { Object leafRef; Leaf next; }
    // A finalizer makes the VM register each instance (a java.lang.ref.Finalizer);
    // HotSpot ignores an empty one.
    static class Resource {
        static int finalized;
        Object payload = new int[4];
        @SuppressWarnings({"deprecation", "removal"})
        @Override protected void finalize() { finalized++; }
    }

    static Object keep;
    static final String CONSTANT = "constant";

    public static void main(String[] args) throws Exception {
        Leaf head = new Leaf(), cur = head;
        for (int i = 0; i < 3000; i++) {
            Leaf n = new Leaf();
            n.baseRef = new int[] { i };
            n.midRef = (i % 2 == 0) ? "s" + i : null;
            n.leafRef = head;                      // cycles back to the head
            cur.next = n;
            cur = n;
        }
        List<Object> weak = new ArrayList<>();
        ReferenceQueue<Object> queue = new ReferenceQueue<>();
        for (int i = 0; i < 200; i++) {
            weak.add(new WeakReference<>(new Object[] { "weakly held " + i }));
            weak.add(new SoftReference<>(new Leaf()));
            Resource r = new Resource();
            weak.add(new PhantomReference<>(r, queue));
            if (i % 2 == 0) weak.add(r);            // half of them reachable
        }
        Object[] sparse = new Object[100];
        for (int i = 0; i < sparse.length; i += 3) sparse[i] = new HashMap<String, Integer>();
        Object garbage = null;
        for (int i = 0; i < 5000; i++) garbage = new Object[] { new Object(), garbage == null ? null : "g" };
        keep = new Object[] { head, weak, sparse };
        HotSpotDiagnosticMXBean bean = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
        bean.dumpHeap(args[0], false);
    }
}
