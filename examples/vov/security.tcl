# security.tcl of the vnc project (vnc.swd/security.tcl): who gets which
# security level, from which hosts. Rules are re-sorted by the server from
# the most user-specific to the least, the highest level first, so their
# order here does not matter.

set allhosts { reno milano elko tahoe }

vtk_security cadmin ADMIN +                  ;# the project owner, from anywhere
vtk_security root   ADMIN +                  ;# the root-run tasker daemon must connect
vtk_security cadmgr ADMIN +
vtk_security -group operators ADMIN $allhosts
vtk_security pat    LEADER elko
vtk_security john   ADMIN john_pc            ;# ADMIN at his desk, USER elsewhere
vtk_security + USER +                        ;# everybody else
