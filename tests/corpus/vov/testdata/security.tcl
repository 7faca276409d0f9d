# security.tcl for the roles corpus: S19's example, then more.
vtk_security + USER +
vtk_security root ADMIN +
vtk_security cadmgr ADMIN +
vtk_security john ADMIN john_pc

set allhosts { reno milano elko tahoe }
vtk_security -group operators ADMIN $allhosts
vtk_security pat LEADER elko       ;# a named user outranks the group
vtk_security dana USER +
vtk_security dana ADMIN dana_pc
set lab "192.168.10.220-192.168.10.240"
vtk_security lab LEADER ${lab}
vtk_security - ADMIN +
vtk_security nohost ADMIN -
